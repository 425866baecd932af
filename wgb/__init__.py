"""wgb: the command line that joins wikigenderbias, relext and kge."""
from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("wgb")
except PackageNotFoundError:  # running from a source tree
    __version__ = "0.0.0+local"
