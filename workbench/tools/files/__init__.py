"""File tools: read_file, write_file, edit_file, ls, glob, grep, with confinement of the model's
paths, .gitignore-aware walking and opening paths with no check-then-use window.
"""
