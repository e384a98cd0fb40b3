"""The commands of the `workbench` line, one module each (a `Command`: flags and handler), and
the app that `workbench` alone opens. `workbench/cli/main.py` registers them."""
