"""Word2Vec training/caching and the vocabulary."""
import json

import numpy as np
import pytest

from relext.model.embeddings import Word2VecParams, corpus_key, embedding_matrix, train_word2vec
from relext.model.vocab import PAD_ID, UNK_ID, Vocab

CORPUS = [["Alice", "married", "Bob", "in", "Paris", "."], ["Bob", "was", "born", "in", "Paris", "."],
          ["Alice", "was", "a", "singer", "."]] * 5
PARAMS = Word2VecParams(dim=8, min_count=1, epochs=2)


def test_word2vec_is_deterministic_and_cached(tmp_path):
    a = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path, use_cache=False)
    b = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path / "other", use_cache=False)
    assert a.index_to_key == b.index_to_key
    np.testing.assert_array_equal(a.vectors, b.vectors)
    assert not list(tmp_path.iterdir())                      # use_cache=False writes nothing
    c = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path)
    files = sorted(p.suffix for p in tmp_path.iterdir())
    assert files == [".json", ".npz"]
    d = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path)  # from the cache
    np.testing.assert_array_equal(c.vectors, d.vectors)
    assert "alice" in c.key_to_index and "Alice" not in c.key_to_index   # lowercased
    assert c.vector_size == 8


def test_cache_key_depends_on_corpus_and_params():
    k = corpus_key(CORPUS, PARAMS)
    assert k == corpus_key(CORPUS, PARAMS)
    assert k != corpus_key(CORPUS[:-1], PARAMS)
    assert k != corpus_key(CORPUS, Word2VecParams(dim=16, min_count=1, epochs=2))
    assert k != corpus_key(CORPUS, Word2VecParams(dim=8, min_count=1, epochs=2, seed=1))


def test_damaged_cache_entry_is_retrained(tmp_path):
    a = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path)
    for p in tmp_path.glob("*.npz"):
        p.write_bytes(b"garbage")
    b = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path)
    np.testing.assert_array_equal(a.vectors, b.vectors)


def test_empty_corpus_is_an_error(tmp_path):
    with pytest.raises(ValueError, match="empty corpus"):
        train_word2vec([[]], PARAMS, cache_dir=tmp_path)


def test_embedding_matrix_rows(tmp_path):
    kv = train_word2vec(CORPUS, PARAMS, cache_dir=tmp_path)
    vocab = Vocab.from_words(kv.index_to_key)
    mat = embedding_matrix(vocab, kv)
    assert mat.shape == (len(vocab), 8) and mat.dtype == np.float32
    assert not mat[PAD_ID].any()
    np.testing.assert_array_equal(mat[vocab.id("paris")], kv["paris"])
    assert mat[UNK_ID].any()


def test_vocab_encode_save_load(tmp_path):
    v = Vocab.from_words(["paris", "alice", "paris"])
    assert v.tokens[:2] == ["[PAD]", "[UNK]"] and len(v) == 4
    assert v.encode(["Paris", "ALICE", "nowhere"]) == [v.id("paris"), v.id("alice"), UNK_ID]
    path = v.save(tmp_path / "vocab.json")
    w = Vocab.load(path)
    assert w.tokens == v.tokens and w.fingerprint() == v.fingerprint()
    obj = json.loads(path.read_text())
    obj["tokens"].append("extra")
    path.write_text(json.dumps(obj))
    with pytest.raises(ValueError, match="fingerprint"):
        Vocab.load(path)
    path.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        Vocab.load(path)
    with pytest.raises(ValueError, match="starts with"):
        Vocab(["a", "b"])
