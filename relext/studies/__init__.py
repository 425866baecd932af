"""Experiment drivers built on the components: the debiasing study (:mod:`relext.studies.debias`)
and the verdicts of the paper's claims (:mod:`relext.studies.claims`). Components
(:mod:`relext.debias`, encoders, selectors) never import this package."""
