"""The contents of the old ``relext.design*`` paths (the statistics moved to :mod:`wgbstats`,
issue #42), reached only through :mod:`relext._moved`, which warns on each old path."""
