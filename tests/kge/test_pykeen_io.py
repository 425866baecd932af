"""PyKEEN both ways for every registered model (`kge.pykeen_io`, `wgb kge pykeen import|export`).

The state-dict conversions run without PyKEEN, against PyKEEN 1.11's documented parameter layout
and interaction formulas written out here; the tests with real PyKEEN models are skipped when the
optional package is not installed."""
import json

import pytest
import torch
from click.testing import CliRunner

from kge.models import MODELS, get_model
from kge.pykeen_io import ENT, REL, state_from_pykeen, state_to_pykeen

NAMES = MODELS.names()
NO_PYKEEN = "PyKEEN is not installed (optional: pip install 'wgb[pykeen]' or pykeen==1.11.1)"


def _model(name, n_ent=20, n_rel=3, dim=6, seed=0):
    torch.manual_seed(seed)
    m = get_model(name, n_ent, n_rel, dim)
    with torch.no_grad():  # off the initial constraints, so the test does not rely on them
        for p in m.parameters():
            p.add_(0.3 * torch.randn_like(p))
    return m.eval()


def _triples(n_ent, n_rel, n=64, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randint(n_ent, (n,), generator=g), torch.randint(n_rel, (n,), generator=g),
            torch.randint(n_ent, (n,), generator=g))


def _complex(w):  # PyKEEN's complex storage: (n, 2d) with real/imag interleaved
    return torch.view_as_complex(w.reshape(w.shape[0], -1, 2).contiguous())


def _pykeen_formula(cls, state, p, h, r, t):
    """PyKEEN 1.11's interaction functions (pykeen.nn.modules) on its own parameter layout."""
    e, r0 = state[ENT], state[REL.format(0)]
    if cls == "TransE":
        return -(e[h] + r0[r] - e[t]).norm(p=p, dim=-1)
    if cls == "TransH":
        w, d = r0[r], state[REL.format(1)][r]
        hh, tt = e[h], e[t]
        return -(hh - (hh * w).sum(-1, keepdim=True) * w + d - tt + (tt * w).sum(-1, keepdim=True) * w).norm(p=p, dim=-1)
    if cls == "DistMult":
        return (e[h] * r0[r] * e[t]).sum(-1)
    ec, rc = _complex(e), _complex(r0)
    if cls == "ComplEx":
        return torch.real((ec[h] * rc[r] * torch.conj(ec[t])).sum(-1))
    return -torch.linalg.vector_norm(ec[h] * rc[r] - ec[t], ord=2, dim=-1)  # RotatE


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_layout_matches_pykeens_formulas(name):
    m = _model(name)
    cls, kwargs, state = state_to_pykeen(m)
    h, r, t = _triples(m.num_entities, m.num_relations)
    with torch.no_grad():
        ours = m.score_hrt(h, r, t)
        theirs = _pykeen_formula(cls, state, kwargs.get("scoring_fct_norm"), h, r, t)
    assert torch.allclose(ours, theirs, atol=1e-5)
    assert kwargs["embedding_dim"] == m.dim


@pytest.mark.parametrize("name", NAMES)
def test_state_dict_round_trip_keeps_the_scores(name):
    m = _model(name)
    cls, kwargs, state = state_to_pykeen(m)
    back = state_from_pykeen(cls, state, p=kwargs.get("scoring_fct_norm"))
    assert back.name == name and back.hparams() == m.hparams()
    h, r, t = _triples(m.num_entities, m.num_relations)
    with torch.no_grad():
        assert torch.allclose(back.score_hrt(h, r, t), m.score_hrt(h, r, t), atol=1e-5)
    if name != "transh":  # TransH's normals come back normalised (the score normalises them anyway)
        for (k, a), b in zip(m.named_parameters(), back.parameters()):
            assert torch.allclose(a, b, atol=1e-6), k


def test_refusals():
    m = _model("transh")
    cls, _, state = state_to_pykeen(m)
    state[REL.format(0)] = state[REL.format(0)] * 2.0   # PyKEEN's unnormalised normals
    with pytest.raises(ValueError, match="not of unit length"):
        state_from_pykeen(cls, state)
    assert state_from_pykeen(cls, state, normalize_normals=True).name == "transh"
    with pytest.raises(ValueError, match="power_norm"):
        state_from_pykeen("TransE", state_to_pykeen(_model("transe"))[2], power_norm=True)
    cls, _, state = state_to_pykeen(_model("rotate"))
    state[REL.format(0)] = state[REL.format(0)] * 1.5
    with pytest.raises(ValueError, match="unit modulus"):
        state_from_pykeen(cls, state)
    with pytest.raises(ValueError, match="no PyKEEN counterpart"):
        state_from_pykeen("ConvE", {})
    with pytest.raises(ValueError, match="has no 'entity_representations"):
        state_from_pykeen("DistMult", {})


# ------------------------------------------------------------------------ with PyKEEN itself
@pytest.fixture
def pykeen():
    return pytest.importorskip("pykeen", reason=NO_PYKEEN)


@pytest.mark.parametrize("name", NAMES)
def test_export_to_pykeen_scores_agree(pykeen, name):
    from kge.pykeen_io import max_score_difference, model_from_pykeen, model_to_pykeen

    m = _model(name)
    pk = model_to_pykeen(m)
    assert type(pk).__name__ == state_to_pykeen(m)[0]
    assert max_score_difference(m, pk) < 1e-5
    back = model_from_pykeen(pk)
    assert max_score_difference(back, pk) < 1e-5


@pytest.mark.parametrize("name", NAMES)
def test_import_a_pykeen_model_scores_agree(pykeen, name):
    import pykeen.models
    from pykeen.triples import CoreTriplesFactory

    from kge.pykeen_io import PYKEEN_CLASSES, max_score_difference, model_from_pykeen

    tf = CoreTriplesFactory.create(mapped_triples=torch.zeros((0, 3), dtype=torch.long), num_entities=25,
                                   num_relations=4)
    pk = getattr(pykeen.models, PYKEEN_CLASSES[name])(triples_factory=tf, embedding_dim=6, random_seed=1)
    pk.post_parameter_update()   # PyKEEN's constraints, as after a training step
    if name == "transh":         # PyKEEN's normals are not unit vectors: refused, or normalised on request
        with pytest.raises(ValueError, match="not of unit length"):
            model_from_pykeen(pk)
        approx = model_from_pykeen(pk, normalize_normals=True)
        assert max_score_difference(approx, pk) > 1e-3
        with torch.no_grad():
            w = pk.relation_representations[0]._embeddings.weight
            w.div_(w.norm(dim=-1, keepdim=True))
    ours = model_from_pykeen(pk)
    assert ours.name == name and (ours.num_entities, ours.num_relations) == (25, 4)
    assert max_score_difference(ours, pk) < 1e-5


@pytest.mark.parametrize("name", NAMES)
def test_cli_export_then_import(pykeen, name, tmp_path, tiny_graph):
    from kge.embeddings import load_model, save_model
    from wgb.cli import cli

    m = _model(name, n_ent=tiny_graph.num_entities, n_rel=tiny_graph.num_relations)
    save_model(m, tmp_path / "emb", tiny_graph)
    gdir = tmp_path / "graph"
    tiny_graph.save(gdir)
    res = CliRunner().invoke(cli, ["kge", "pykeen", "export", str(tmp_path / "emb"), str(tmp_path / "pk"),
                                   "--graph", str(gdir)])
    assert res.exit_code == 0, res.output
    out = json.loads(res.output)
    assert out["model"] == name and out["max_score_difference"] < 1e-5
    assert {p.name for p in (tmp_path / "pk").iterdir()} >= {"trained_model.pkl", "state_dict.pt",
                                                             "pykeen_model.json", "training_triples"}
    # what a PyKEEN user does with it
    from pykeen.triples import TriplesFactory

    tf = TriplesFactory.from_path_binary(tmp_path / "pk" / "training_triples")
    assert tf.entity_to_id == tiny_graph.entity_to_id and tf.num_triples == len(tiny_graph.train)
    pk = torch.load(tmp_path / "pk" / "trained_model.pkl", weights_only=False)
    h, r, t = _triples(m.num_entities, m.num_relations)
    with torch.no_grad():
        assert torch.allclose(pk.score_hrt(torch.stack([h, r, t], 1)).reshape(-1), m.score_hrt(h, r, t), atol=1e-5)
    # and back (tensors-only files, no pickle)
    res = CliRunner().invoke(cli, ["kge", "pykeen", "import", str(tmp_path / "pk"), str(tmp_path / "back")])
    assert res.exit_code == 0, res.output
    back = load_model(tmp_path / "back", tiny_graph)  # names line up with the graph
    with torch.no_grad():
        assert torch.allclose(back.score_hrt(h, r, t), m.score_hrt(h, r, t), atol=1e-5)


def test_pickled_pykeen_model_is_never_loaded(pykeen, tmp_path):
    from kge.pykeen_io import export_pykeen, import_pykeen, model_to_pykeen, save_pykeen_tensors

    m = _model("distmult")
    export_pykeen(m, tmp_path / "pk")
    for f in ("state_dict.pt", "pykeen_model.json"):  # as a PyKEEN pipeline's save_to_directory
        (tmp_path / "pk" / f).unlink()
    with pytest.raises(ValueError, match="pickled PyKEEN model, which is never loaded.*save_pykeen_tensors"):
        import_pykeen(tmp_path / "pk")
    save_pykeen_tensors(model_to_pykeen(m), tmp_path / "pk")  # where the PyKEEN model lives
    model, ents, _ = import_pykeen(tmp_path / "pk")
    assert ents is None and torch.equal(model.entity.weight.detach(), m.entity.weight.detach())
