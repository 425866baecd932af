"""Every generated block of the READMEs matches the committed results it is generated from."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_readme_blocks_are_regenerated_from_results():
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "readme_tables.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


def test_a_retyped_number_is_caught(tmp_path, monkeypatch):
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import readme_tables
    finally:
        sys.path.pop(0)
    text = (ROOT / "README.md").read_text()
    block = "<!-- BEGIN generated:data-stats -->\n"
    assert block in text
    edited = text.replace("35.3%", "35.7%", 1)
    assert edited != text and readme_tables.render(edited) == text
