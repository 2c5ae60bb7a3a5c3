"""No silent loss of earlier work: ``run`` refuses an earlier run folder unless
``--resume`` (which keeps the finished seeds) or ``--force``; ``compare --resume``
refuses a comparison of another configuration unless ``--force``."""

import contextlib
import io
import json

from mumbo_jax.run import cli
from tests.test_cli import TINY


def main(*argv):
    """``cli.main`` with stdout captured: ``(exit code, stdout)``."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        code = cli.main(list(argv))
    return code, buf.getvalue()


def test_run_refuses_overwrite_and_resume_keeps_finished_seeds(tmp_path, capsys):
    config = tmp_path / "tiny.toml"
    config.write_text(TINY)
    out = str(tmp_path / "out")
    assert main("run", str(config), "--out", out)[0] == 0
    first = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [s["seed"] for s in first["seeds"]] == [0] and first["complete"]

    code, _ = main("run", str(config), "--out", out)
    assert code == 2 and "already holds an earlier run" in capsys.readouterr().err
    code, _ = main("run", str(config), "--out", out, "--resume", "--budget", "7")
    err = capsys.readouterr().err
    assert code == 2 and "[run] budget" in err and "--force" in err
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == first  # untouched

    code, stdout = main("run", str(config), "--out", out, "--resume", "--seeds", "2")
    assert code == 0 and "keeping the finished seeds [0]" in stdout and "seed 1 done" in stdout
    assert "seed 0 done" not in stdout  # not run again
    second = json.loads((tmp_path / "out" / "results.json").read_text())
    assert [s["seed"] for s in second["seeds"]] == [0, 1] and second["complete"]
    assert second["seeds"][0] == first["seeds"][0]
    assert second["config"]["run"]["seeds"] == 2

    code, stdout = main("run", str(config), "--out", out, "--resume", "--seeds", "2")
    assert code == 0 and "running none" in stdout  # everything kept, nothing run

    code, stdout = main("run", str(config), "--out", out, "--force")  # overwrite: one seed again
    assert code == 0
    assert [s["seed"] for s in json.loads((tmp_path / "out" / "results.json").read_text())["seeds"]] == [0]


def test_compare_refuses_overwrite_and_mismatched_resume(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    earlier = {"problem": "forrester", "budget": 5.0, "seeds": [0], "max_evals": 2, "strategies": {}}
    (out / "results.json").write_text(json.dumps(earlier))
    cfg = tmp_path / "c.toml"
    cfg.write_text('[compare]\nproblem = "forrester"\nstrategies = ["random"]\nseeds = 2\nbudget = 5\n'
                   'max_evals = 2\nout = "' + str(out) + '"\n')
    assert cli.main(["compare", str(cfg)]) == 2
    assert "already holds an earlier comparison" in capsys.readouterr().err
    assert cli.main(["compare", str(cfg), "--resume"]) == 2
    err = capsys.readouterr().err
    assert "seeds" in err and "--force" in err and "different comparison" in err
    assert json.loads((out / "results.json").read_text()) == earlier  # untouched
    (out / "results.json").write_text("{not json")
    assert cli.main(["compare", str(cfg), "--resume"]) == 2
    assert "unreadable" in capsys.readouterr().err
