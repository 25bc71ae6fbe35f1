"""nltk, imported on first use.

`import nltk` takes about 0.9 s on a Xeon with AMX (it imports scipy.stats,
scikit-learn and more for modules this package never uses). The
package's modules take `nltk` from here, a module object that loads nltk
the first time one of its attributes is read
(`importlib.util.LazyLoader`); a process that never builds a tree never
pays for it. In a command's process (`keras-ordered`, the recipes) it
loads without scipy.stats and scikit-learn, in about 0.1 s (`_LeanLoader`).
Where nltk is already imported, this is that module.

    from keras_ordered._nltk import nltk

    tree = nltk.Tree("S", ["a"])  # nltk loads here
"""

import contextlib
import importlib.abc
import importlib.util
import sys

from keras_ordered import _quiet


class _LeanLoader(importlib.abc.Loader):
    """A package's own loader, executing it without the optional
    integrations of `_quiet.NLTK_UNUSED_INTEGRATIONS` in a command's
    process (`_quiet.quiet_requested()`): nltk imports scipy.stats and
    scikit-learn for modules this package never uses, about 0.6 s of a
    command's start-up. A library import executes it as it is."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        refused = (
            _quiet.unused_integrations_refused(
                names=_quiet.NLTK_UNUSED_INTEGRATIONS)
            if _quiet.quiet_requested() else contextlib.nullcontext())
        with refused:
            self.loader.exec_module(module)

    def __getattr__(self, name):  # the rest of the loader's protocol
        return getattr(self.loader, name)


def _lazy(name):
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None:
        raise ImportError(
            f"keras-ordered needs {name}: pip install 'nltk>=3.9,<4'")
    loader = importlib.util.LazyLoader(_LeanLoader(spec.loader))
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module


nltk = _lazy("nltk")
