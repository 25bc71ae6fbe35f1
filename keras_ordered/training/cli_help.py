"""The `--help` layout every recipe shares."""

import argparse


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Keeps the description's and epilog's layout and shows every option's
    default (options whose default is None say in their help what happens;
    a list default is shown as its items separated by spaces, as typed)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (
            action.default not in (None, argparse.SUPPRESS, False)
            and "%(default)" not in text
            and action.option_strings
        ):
            if isinstance(action.default, (list, tuple)):
                text += " (default: " + " ".join(action.default) + ")"
            else:
                text += " (default: %(default)s)"
        return text
