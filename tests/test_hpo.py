"""Real tuning objectives against direct scikit-learn references, and short versions
of the two studies (a couple of BO steps each on tiny data)."""

import importlib.util
import pathlib

import numpy as np
import pytest

from mumbo_jax.benchmarks import hpo
from mumbo_jax.bo.settings import BOSettings

ROOT = pathlib.Path(__file__).resolve().parents[1]
# small settings for the short fastcv study (those of tests/test_costmodel.py)
SMALL = BOSettings(maximiser={"n_candidates": 300, "n_starts": 4, "polish_steps": 10},
                   fit={"restarts": 1, "max_iter": 40}, gstar={"grid": 1000, "samples": 4})


def _script(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "experiments" / "paper" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_nudge_shifts_by_one_pixel_with_zero_fill():
    img = np.arange(64.0).reshape(1, 64) + 1
    out = hpo.nudge(img).reshape(4, 8, 8)
    ref = img.reshape(8, 8)
    np.testing.assert_array_equal(out[0][:, 1:], ref[:, :-1])  # right
    np.testing.assert_array_equal(out[0][:, 0], 0)
    np.testing.assert_array_equal(out[1][:, :-1], ref[:, 1:])  # left
    np.testing.assert_array_equal(out[2][1:], ref[:-1])  # down
    np.testing.assert_array_equal(out[3][:-1], ref[1:])  # up


def test_digits_split_sizes_and_augmentation():
    plain, aug = hpo.digits_split(0, augment=False), hpo.digits_split(0)
    n = len(plain.y_train) + len(plain.y_valid) + len(plain.y_test)
    assert n == 1797
    assert len(aug.y_train) == 5 * len(plain.y_train)
    np.testing.assert_array_equal(aug.x_train[: len(plain.y_train)], plain.x_train)
    np.testing.assert_array_equal(aug.x_valid, plain.x_valid)
    with pytest.raises(ValueError, match="fractions"):
        hpo.digits_split(0, fractions=(0.5, 0.5, 0.5))


def test_subset_svm_matches_a_direct_fit():
    from sklearn.svm import SVC

    split = hpo.digits_split(1, augment=False)
    obj = hpo.SubsetSVM(split, seed=3)
    x, z = np.asarray([3.0, -4.0]), -2.0
    err, seconds = obj(x, z)
    n = int(np.ceil(0.25 * len(split.y_train)))
    idx = np.random.default_rng(3).permutation(len(split.y_train))[:n]
    ref = SVC(C=8.0, gamma=2.0**-4).fit(split.x_train[idx], split.y_train[idx])
    assert err == np.mean(ref.predict(split.x_valid) != split.y_valid)
    assert seconds > 0
    full = SVC(C=8.0, gamma=2.0**-4).fit(split.x_train, split.y_train)
    assert obj.test_error(x) == np.mean(full.predict(split.x_test) != split.y_test)
    # more data helps a good setting
    assert obj(x, 0.0)[0] <= obj(x, -6.0)[0]
    with pytest.raises(ValueError, match="fidelity"):
        obj(x, 0.5)
    with pytest.raises(ValueError, match="coordinates"):
        obj([1.0], -1.0)


def test_subset_design_is_the_papers():
    x, z = hpo.subset_design(hpo.SVM_BOUNDS, 10, seed=0)
    assert x.shape == (40, 2) and z.shape == (40,)
    np.testing.assert_allclose(np.unique(z), [-6, -5, -4, -3])
    np.testing.assert_array_equal(x[:10], x[30:])  # the same settings at every fraction
    assert np.all((x >= -10) & (x <= 10))


def test_kfold_objective_matches_sklearn_cross_validation():
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    obj = hpo.fastcv_svm(n_subset=100, n_folds=5, seed=2)
    x = np.asarray([2.0, -5.0])
    cv = [(np.setdiff1d(np.arange(100), f), f) for f in obj.folds]
    acc = cross_val_score(SVC(C=4.0, gamma=2.0**-5), obj.x, obj.y, cv=cv)
    np.testing.assert_allclose(obj.fold_losses(x), 1 - acc, atol=1e-12)
    assert obj.cv_mean(x) == pytest.approx(1 - acc.mean(), abs=1e-12)
    loss, seconds = obj(x, 3)
    assert loss == pytest.approx(1 - acc[3], abs=1e-12) and seconds > 0
    # the folds partition the data
    np.testing.assert_array_equal(np.sort(np.concatenate(obj.folds)), np.arange(100))
    with pytest.raises(ValueError, match="fold 5 does not exist"):
        obj(x, 5)
    with pytest.raises(ValueError, match="n_folds"):
        hpo.KFoldObjective(None, None, obj.x, obj.y, obj.x_test, obj.y_test, 1, hpo.SVM_BOUNDS)


def test_gbm_objective_gives_finite_log_losses():
    obj = hpo.fastcv_gbm(n_subset=60, n_folds=3)
    losses = obj.fold_losses([-1.0, 2.0, 0.8])
    assert losses.shape == (3,) and np.all(np.isfinite(losses)) and np.all(losses > 0)


# --------------------------------------------------------------------------- the studies, short
# (the FABOLAS study's short run is in tests/test_costmodel.py, on that file's task: the
# programs of its learned-cost ask/tell test serve it)


@pytest.mark.slow  # 41 s of a 12-minute default run (the FASTCV script end to end); `pytest -m slow` runs it
def test_fastcv_study_short():
    cv = _script("fastcv")
    k = 3
    obj = hpo.fastcv_svm(n_subset=60, n_folds=k, seed=0)
    design = 2 * obj.dim * k  # 2 d settings on every fold
    runs = {m: cv.run(m, obj, 3, 0, settings=SMALL, log=lambda s: None) for m in cv.METHODS}
    for m, r in runs.items():
        ev = r["evals"]
        step = k if m == "cv_ei" else 1  # a full K-fold CV evaluation counts K fits
        assert r["design_fits"] == design
        # every query adds its fits and the run stops as soon as 3 fits follow the design
        assert [e["fits"] for e in ev] == list(range(step, design + 3 + 1, step))
        n_design = design // step
        assert [e["decision"] for e in ev] == [False] * n_design + [True] * (len(ev) - n_design)
        if m != "cv_ei":  # the multi-task design: the same 2 d settings on each of the K folds
            assert sorted(e["fold"] for e in ev[:design]) == sorted(list(range(k)) * 2 * obj.dim)
            assert len(np.unique(np.round([e["x"] for e in ev[:design]], 10), axis=0)) == 2 * obj.dim
        # the recorded losses are the objective's, recomputed here (one fold, or the K-fold mean)
        for e in ev[::5] + ev[-1:]:
            ref = obj.cv_mean(e["x"]) if m == "cv_ei" else obj.fold_losses(e["x"])[e["fold"]]
            assert e["loss"] == pytest.approx(ref, abs=1e-12)
    grid, table = cv.summarise(list(runs.values()), obj, design + 3)
    assert grid.tolist() == list(range(design + 4))
    for m, r in runs.items():
        x_final = r["trace"][-1][1]
        # the default recommendation (incumbent_rule "global") need not be an evaluated x: the
        # table must hold the objective's values at whatever x was recommended
        assert table[m]["final_cv_per_seed"] == pytest.approx([obj.cv_mean(x_final)], abs=1e-12)
        assert table[m]["final_test_per_seed"] == pytest.approx([obj.test_loss(x_final)], abs=1e-12)
