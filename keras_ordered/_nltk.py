"""nltk, imported on first use.

`import nltk` takes about 2.5 s (it imports scipy.stats, scikit-learn and
more for modules this package never uses): a quarter of `import
keras_ordered`. The package's modules take `nltk` from here, a module
object that loads nltk the first time one of its attributes is read
(`importlib.util.LazyLoader`); a process that never builds a tree never
pays for it. Where nltk is already imported, this is that module.

    from keras_ordered._nltk import nltk

    tree = nltk.Tree("S", ["a"])  # nltk loads here
"""

import importlib.util
import sys


def _lazy(name):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ImportError(
            f"keras-ordered needs {name}: pip install 'nltk>=3.9,<4'")
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


nltk = _lazy("nltk")
