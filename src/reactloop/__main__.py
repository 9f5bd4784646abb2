"""``python -m reactloop`` is the ``reactloop`` command."""

from reactloop.cli import main

main()
