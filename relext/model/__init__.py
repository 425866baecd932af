"""The extractor's parts: :mod:`~relext.model.bags` (bags of sentences and their tensors),
:mod:`~relext.model.vocab`, :mod:`~relext.model.embeddings` (the cached Word2Vec vectors),
:mod:`~relext.model.encoders` and :mod:`~relext.model.selectors` (the registered components),
:mod:`~relext.model.bag_model` (encoder + selector + classifier: ``BagModel``) and
:mod:`~relext.model.heap` (memory kept between training steps). Nothing here knows runs, folds or
metrics."""


def __getattr__(name):
    # ``from relext.model import BagModel, build_model`` (the old module relext.model), without importing torch
    # for every user of the bags or the vocabulary
    if name in ("BagModel", "build_model"):
        from relext.model import bag_model

        return getattr(bag_model, name)
    raise AttributeError(f"module 'relext.model' has no attribute {name!r}")
