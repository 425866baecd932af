"""Word lists shipped with relext (gzipped); see PROVENANCE.md."""
