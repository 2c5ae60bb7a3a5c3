"""What tell accepts: extreme y values (mumbo_jax.bo.told_values), a [1, d] x, and the
types ask hands out."""

import numpy as np
import pytest

from mumbo_jax.benchmarks import problems, tasks
from mumbo_jax.bo.asktell import AskTell
from mumbo_jax.bo.told_values import MAX_ABS_Y, OutlierWarning
from tests.bo_helpers import FAST


@pytest.fixture()
def opt():
    return AskTell(tasks.problem_task(problems.get_problem("currin")), FAST, seed=0)


@pytest.mark.parametrize("y", [1e300, -1e300, 1e308, 1e150, -1.5e100])
def test_a_y_beyond_the_documented_magnitude_is_an_error_naming_the_point(opt, y):
    opt.tell([0.1, 0.2], 0, 1.0)
    with pytest.raises(ValueError, match=r"at x=\[0.5, 0.25\], z=1: \|y\| must be at most 1e\+100"):
        opt.tell([0.5, 0.25], 1, y)
    assert opt.y == [1.0]  # nothing recorded


def test_the_limit_itself_is_accepted(opt):
    opt.tell([0.5, 0.25], 1, MAX_ABS_Y)
    assert opt.y == [MAX_ABS_Y]


def test_an_outlier_among_ordinary_values_is_warned_about_by_point(opt):
    for i, y in enumerate((1.0, 2.0, 3.0, 2.5)):
        opt.tell([0.1 * i, 0.5], 0, y)
    with pytest.warns(OutlierWarning, match=r"y=1e\+50 at x=\[0.9, 0.9\], z=0 lies 5e\+49 times the range"):
        opt.tell([0.9, 0.9], 0, 1e50)
    assert opt.y[-1] == 1e50  # accepted: the user decides


def test_ordinary_spread_values_are_not_outliers(opt, recwarn):
    for i, y in enumerate((1.0, 2.0, 3.0, 50.0, -20.0)):
        opt.tell([0.1 * i, 0.5], 0, y)
    assert not [w for w in recwarn if issubclass(w.category, OutlierWarning)]


def test_a_one_row_matrix_x_is_rejected_with_a_hint(opt):
    with pytest.raises(ValueError, match=r"got shape \(1, 2\).*pass x\[0\] of a \[1, d\] array"):
        opt.tell([[0.1, 0.2]], 0, 1.0)
    with pytest.raises(ValueError, match=r"got shape \(1, 2\)"):
        opt.tell_failure(np.asarray([[0.1, 0.2]]), 0)
    assert opt.x == [] and opt.failed == []
    opt.tell(np.asarray([[0.1, 0.2]])[0], 0, 1.0)  # the hint works
    assert opt.x[0].tolist() == [0.1, 0.2]


def test_ask_hands_out_a_plain_array_and_a_python_fidelity(opt):
    x, z = opt.ask()  # a design point
    assert type(x) is np.ndarray and x.dtype == np.float64 and x.flags.writeable and type(z) is int
    assert "np." not in repr(z) and all(type(v) is float for v in x.tolist())
    for i in range(opt.n_design):  # the design told: the next ask is a BO proposal
        xi, zi = opt.design[i]
        opt.tell(xi, zi, float(np.sum(xi)) + zi)
    opt._pending.clear()
    x, z = opt.ask()
    assert type(x) is np.ndarray and x.dtype == np.float64 and x.flags.writeable and type(z) is int


@pytest.mark.parametrize("score", [1e150, -1e300, 1e308])
def test_tune_records_a_score_beyond_the_limit_as_a_failed_evaluation(score):
    from mumbo_jax.run.tune.objective import MAX_ABS_SCORE, BadReturn, parse_return

    assert MAX_ABS_SCORE == MAX_ABS_Y
    with pytest.raises(BadReturn, match="overflow the model"):
        parse_return(score)
    assert parse_return(-1e99) == (-1e99, None)
