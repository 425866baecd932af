"""wgb: the command line that joins wikigenderbias, relext and kge."""
from wgbcore.provenance import package_version

__version__ = package_version()
