"""``python -m reactloop`` is the ``reactloop`` command."""

from reactloop.cli import main

main(prog_name="reactloop")  # the same name in messages and for shell completion
