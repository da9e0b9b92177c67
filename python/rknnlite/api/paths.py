"""What the modules accept as a file path."""
import os


def is_path(value):
    """A str, bytes or os.PathLike naming something. An int is not one: os and
    open() would take it as a file descriptor."""
    return isinstance(value, (str, bytes, os.PathLike)) and len(os.fspath(value)) > 0
