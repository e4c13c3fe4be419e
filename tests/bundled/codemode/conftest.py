import pytest

pytest.importorskip("quickjs", reason="codemode's sandbox needs the quickjs-ng package")
