"""``make golden``: rewrite every golden playthrough."""

from tests.golden.transcript import HERE, regenerate

if __name__ == "__main__":
    for path in regenerate():
        print(f"wrote {path.relative_to(HERE.parent.parent)}")
