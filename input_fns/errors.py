"""Exceptions shared by the dataset loaders."""


class DatasetNotFoundError(FileNotFoundError):
    """Dataset files are absent everywhere we looked; the message says where and how to fix it."""
