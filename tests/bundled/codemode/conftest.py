import pytest

pytest.importorskip("quickjs", reason="codemode's sandbox needs the quickjs-ng package")


@pytest.fixture(autouse=True)
def reset_faux():
    from tau.llm.providers import faux

    yield
    faux.use_script(None)
