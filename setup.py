"""Builds keras-ordered (the metadata is in setup.cfg).

The one thing setup.cfg cannot say: the shipped models live in
`saved_models/` beside the package (where a clone keeps them and an
editable install finds them), and a built wheel carries them inside the
package, as `keras_ordered/saved_models/<name>/{model.keras, card.json,
README.md}` (a shipped ensemble: `ensemble.json` and `README.md`), where
`keras_ordered.shipped` looks first.
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
SHIPPED_FILES = ("model.keras", "card.json", "ensemble.json", "README.md")


class BuildWithShippedModels(build_py):
    """`build_py`, then the shipped models copied into the built package."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads saved_models/ in place
        source = os.path.join(HERE, "saved_models")
        target = os.path.join(self.build_lib, "keras_ordered", "saved_models")
        for name in sorted(os.listdir(source)):
            folder = os.path.join(source, name)
            present = [file_name for file_name in SHIPPED_FILES
                       if os.path.isfile(os.path.join(folder, file_name))]
            if "card.json" not in present and "ensemble.json" not in present:
                continue
            os.makedirs(os.path.join(target, name), exist_ok=True)
            for file_name in present:
                shutil.copyfile(os.path.join(folder, file_name),
                                os.path.join(target, name, file_name))
        shutil.copyfile(os.path.join(source, "README.md"),
                        os.path.join(target, "README.md"))


setup(cmdclass={"build_py": BuildWithShippedModels})
