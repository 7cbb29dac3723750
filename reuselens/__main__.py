"""`python -m reuselens`: the `reuselens` command."""

from reuselens.cli.main import entry

entry()
