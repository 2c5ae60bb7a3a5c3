"""Real hyper-parameter tuning objectives on data bundled with scikit-learn.

Two kinds of cheap proxies for an expensive validation score (paper Sections 4.2, 4.3):

* :class:`SubsetSVM` (FABOLAS): an RBF SVM's C and gamma (log2 scale) trained on a
  fraction s of the training set and scored on a fixed validation set. The fidelity
  the model sees is ``z = log2 s`` in ``[log2 s_min, 0]`` (RoBO's FABOLAS also works
  with log data fractions): the paper's design fractions 1/64, 1/32, 1/16, 1/8 are
  then evenly spread, and a cost polynomial in s is linear in z.
* :class:`KFoldObjective` (FASTCV): one model fitted on K-1 folds and scored on the
  held-out fold k; the target is the mean over the K folds.

Every evaluation returns ``(loss, seconds)``: the loss to minimise and the measured
wall-clock seconds of training and scoring (what a learned cost model fits). The BO
loop maximises, so tell it ``-loss``. Each objective also has the offline quantities the
studies report afterwards: the test error of a setting trained on all training data.

Data: ``sklearn.datasets.load_digits`` (1797 8x8 digits, MNIST-like) and
``load_breast_cancer``; both ship with scikit-learn (no download).
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np
from scipy import ndimage

__all__ = [
    "SVM_BOUNDS", "MIN_FRACTION", "PAPER_FRACTIONS", "GBM_BOUNDS", "Split", "SubsetSVM", "KFoldObjective",
    "nudge", "digits_split", "subset_design", "fastcv_svm", "fastcv_gbm",
]

SVM_BOUNDS = ((-10.0, 10.0), (-10.0, 10.0))  # log2 C, log2 gamma (FABOLAS' ranges)
MIN_FRACTION = 1.0 / 64.0
PAPER_FRACTIONS = (1 / 64, 1 / 32, 1 / 16, 1 / 8)  # FABOLAS' initial design


def _check_x(x, dim):
    x = np.asarray(x, dtype=float).reshape(-1)
    if x.shape != (dim,):
        raise ValueError(f"a setting must have {dim} coordinates, got {x.shape[0]}")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"a setting must be finite, got {x.tolist()}")
    return x


# --------------------------------------------------------------------------- FABOLAS


def nudge(images: np.ndarray) -> np.ndarray:
    """Four copies of each 8x8 image shifted by one pixel (up, down, left, right), as
    scikit-learn's RBM example does: ``[n, 64] -> [4 n, 64]``."""
    imgs = np.asarray(images, float).reshape(-1, 8, 8)
    shifts = ((0, 1), (0, -1), (1, 0), (-1, 0))
    out = [ndimage.shift(imgs, (0,) + s, mode="constant", order=0) for s in shifts]
    return np.concatenate(out).reshape(-1, 64)


@dataclasses.dataclass(frozen=True)
class Split:
    """Train / validation / test arrays (features in [0, 1])."""

    x_train: np.ndarray
    y_train: np.ndarray
    x_valid: np.ndarray
    y_valid: np.ndarray
    x_test: np.ndarray
    y_test: np.ndarray


def digits_split(seed: int = 0, augment: bool = True, fractions=(0.6, 0.2, 0.2)) -> Split:
    """digits split by original image into train / validation / test.

    With ``augment`` the training images get four one-pixel-shifted copies each (5x the
    data, ~5400 images): full-data SVM fits then take about a second, so that smaller
    training fractions save real time. Validation and test images are never shifted
    copies of training images.
    """
    from sklearn.datasets import load_digits

    fr = np.asarray(fractions, float)
    if fr.shape != (3,) or np.any(fr <= 0) or abs(fr.sum() - 1) > 1e-9:
        raise ValueError(f"fractions must be three positive numbers summing to 1, got {fractions}")
    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    perm = np.random.default_rng(seed).permutation(len(y))
    n_tr, n_va = int(fr[0] * len(y)), int(fr[1] * len(y))
    tr, va, te = perm[:n_tr], perm[n_tr:n_tr + n_va], perm[n_tr + n_va:]
    x_tr, y_tr = x[tr], y[tr]
    if augment:
        x_tr = np.concatenate([x_tr, nudge(x_tr)])
        y_tr = np.tile(y_tr, 5)
    return Split(x_tr, y_tr, x[va], y[va], x[te], y[te])


class SubsetSVM:
    """Validation error of an RBF SVM trained on a fraction of the training data.

    ``obj(x, z) -> (error, seconds)`` with ``x = (log2 C, log2 gamma)`` and fidelity
    ``z = log2 s``: the SVM is fitted on the first ``ceil(s n)`` training points of a
    fixed random order (nested subsets; at least 20 points) and scored on the
    validation set. ``test_error(x)`` trains on all training data and scores the
    held-out test set (computed offline, after a run).

    Args:
        split: :func:`digits_split` (or any :class:`Split`).
        seed: order of the training points.
    """

    bounds = SVM_BOUNDS
    fidelity_bounds = (float(np.log2(MIN_FRACTION)), 0.0)
    target_fidelity = 0.0

    def __init__(self, split: Split, seed: int = 0):
        self.split = split
        self.order = np.random.default_rng(seed).permutation(len(split.y_train))
        self._test_cache: dict = {}

    def _fit(self, x, fraction):
        from sklearn.svm import SVC

        n = max(20, int(np.ceil(fraction * len(self.order))))
        idx = self.order[:n]
        return SVC(C=2.0 ** x[0], gamma=2.0 ** x[1]).fit(self.split.x_train[idx], self.split.y_train[idx])

    def __call__(self, x, z):
        x = _check_x(x, 2)
        z = float(z)
        lo, hi = self.fidelity_bounds
        if not np.isfinite(z) or z < lo - 1e-9 or z > hi + 1e-9:
            raise ValueError(f"fidelity z = log2(fraction) must lie in [{lo}, {hi}], got {z}")
        t0 = time.perf_counter()
        model = self._fit(x, 2.0 ** min(z, 0.0))
        err = float(np.mean(model.predict(self.split.x_valid) != self.split.y_valid))
        return err, time.perf_counter() - t0

    def test_error(self, x) -> float:
        """Test error of ``x`` trained on the whole training set (cached)."""
        x = _check_x(x, 2)
        key = tuple(np.round(x, 12))
        if key not in self._test_cache:
            model = self._fit(x, 1.0)
            self._test_cache[key] = float(np.mean(model.predict(self.split.x_test) != self.split.y_test))
        return self._test_cache[key]


def subset_design(bounds, n_settings: int = 10, fractions=PAPER_FRACTIONS, seed: int = 0):
    """FABOLAS' initial design: ``n_settings`` uniform settings, each at every data
    fraction. Returns ``(x [n F, d], z [n F])`` with ``z = log2 fraction`` (settings
    vary fastest within each fraction)."""
    b = np.asarray(bounds, float)
    fr = np.asarray(fractions, float)
    if np.any(fr <= 0) or np.any(fr > 1):
        raise ValueError(f"fractions must lie in (0, 1], got {fr.tolist()}")
    if int(n_settings) != n_settings or n_settings < 1:
        raise ValueError(f"n_settings must be a positive integer, got {n_settings}")
    u = np.random.default_rng(seed).uniform(size=(int(n_settings), b.shape[0]))
    x = b[:, 0] + (b[:, 1] - b[:, 0]) * u
    return np.tile(x, (fr.size, 1)), np.repeat(np.log2(fr), int(n_settings))


# --------------------------------------------------------------------------- FASTCV


class KFoldObjective:
    """K-fold cross-validation as K tasks: ``obj(x, k) -> (loss on fold k, seconds)``.

    The model ``make(x)`` (an unfitted scikit-learn estimator) is fitted on the other
    K-1 folds and scored by ``loss(estimator, X_fold, y_fold)``. ``cv_mean(x)`` is the
    target g(x) (mean over folds, cached) and ``test_loss(x)`` the loss on held-out
    data of the model fitted on all K folds.

    Args:
        make: ``x [d] -> estimator``.
        loss: ``(fitted estimator, X, y) -> float``.
        x, y: the data that is cross-validated.
        x_test, y_test: held-out data.
        n_folds: K.
        bounds: search box of x.
        seed: fold assignment (stratified by class).
    """

    def __init__(self, make, loss, x, y, x_test, y_test, n_folds: int, bounds, seed: int = 0):
        from sklearn.model_selection import StratifiedKFold

        if int(n_folds) != n_folds or n_folds < 2:
            raise ValueError(f"n_folds must be an integer >= 2, got {n_folds}")
        self.make, self.loss = make, loss
        self.x, self.y, self.x_test, self.y_test = x, y, x_test, y_test
        self.n_folds, self.bounds = int(n_folds), tuple(tuple(map(float, b)) for b in bounds)
        skf = StratifiedKFold(self.n_folds, shuffle=True, random_state=seed)
        self.folds = [test for _, test in skf.split(x, y)]
        self._cache: dict = {}
        self._test_cache: dict = {}

    @property
    def dim(self) -> int:
        return len(self.bounds)

    def _fold_loss(self, x, k):
        test = self.folds[k]
        train = np.setdiff1d(np.arange(len(self.y)), test)
        model = self.make(x).fit(self.x[train], self.y[train])
        return float(self.loss(model, self.x[test], self.y[test]))

    def __call__(self, x, k):
        x = _check_x(x, self.dim)
        if int(k) != k or not 0 <= k < self.n_folds:
            raise ValueError(f"fold {k} does not exist; folds are 0..{self.n_folds - 1}")
        t0 = time.perf_counter()
        val = self._fold_loss(x, int(k))
        seconds = time.perf_counter() - t0
        self._cache[(tuple(np.round(x, 12)), int(k))] = val
        return val, seconds

    def fold_losses(self, x) -> np.ndarray:
        """``[K]`` loss on every fold (cached per fold)."""
        x = _check_x(x, self.dim)
        key = tuple(np.round(x, 12))
        out = []
        for k in range(self.n_folds):
            if (key, k) not in self._cache:
                self._cache[(key, k)] = self._fold_loss(x, k)
            out.append(self._cache[(key, k)])
        return np.asarray(out)

    def cv_mean(self, x) -> float:
        """The target: mean loss over the K folds."""
        return float(np.mean(self.fold_losses(x)))

    def test_loss(self, x) -> float:
        """Loss on the held-out data of the model fitted on all K folds (cached)."""
        x = _check_x(x, self.dim)
        key = tuple(np.round(x, 12))
        if key not in self._test_cache:
            model = self.make(x).fit(self.x, self.y)
            self._test_cache[key] = float(self.loss(model, self.x_test, self.y_test))
        return self._test_cache[key]


def _error(model, x, y):
    return float(np.mean(model.predict(x) != y))


def _log_loss(model, x, y):
    from sklearn.metrics import log_loss

    return float(log_loss(y, model.predict_proba(x), labels=model.classes_))


def _svm(x):
    from sklearn.svm import SVC

    return SVC(C=2.0 ** x[0], gamma=2.0 ** x[1])


def fastcv_svm(n_subset: int = 200, n_folds: int = 10, seed: int = 0) -> KFoldObjective:
    """SVM (log2 C, log2 gamma in [-10, 10]) by K-fold CV error on a small random subset
    of digits (small folds disagree, as the paper's 1,000 IMDB reviews); the other
    digits are the held-out test set."""
    from sklearn.datasets import load_digits

    if int(n_subset) != n_subset or n_subset < 2 * n_folds:
        raise ValueError(f"n_subset must be an integer >= 2 n_folds, got {n_subset}")
    x, y = load_digits(return_X_y=True)
    x = x / 16.0
    perm = np.random.default_rng(seed).permutation(len(y))
    cv, te = perm[:n_subset], perm[n_subset:]
    return KFoldObjective(_svm, _error, x[cv], y[cv], x[te], y[te], n_folds, SVM_BOUNDS, seed)


GBM_BOUNDS = ((-3.0, 0.0), (1.0, 5.0), (0.2, 1.0))  # log10 learning rate, max depth, subsample


def _gbm(x):
    from sklearn.ensemble import GradientBoostingClassifier

    return GradientBoostingClassifier(n_estimators=40, learning_rate=10.0 ** x[0], max_depth=int(round(x[1])),
                                      subsample=float(x[2]), random_state=0)


def fastcv_gbm(n_subset: int = 300, n_folds: int = 5, seed: int = 0) -> KFoldObjective:
    """Gradient boosting (log10 learning rate in [-3, 0], max depth in [1, 5] rounded,
    subsample in [0.2, 1]; 40 trees) by K-fold CV log-loss on a random subset of the
    breast-cancer data; the rest is the held-out test set."""
    from sklearn.datasets import load_breast_cancer

    if int(n_subset) != n_subset or n_subset < 2 * n_folds:
        raise ValueError(f"n_subset must be an integer >= 2 n_folds, got {n_subset}")
    x, y = load_breast_cancer(return_X_y=True)
    x = (x - x.mean(0)) / x.std(0)
    perm = np.random.default_rng(seed).permutation(len(y))
    cv, te = perm[:n_subset], perm[n_subset:]
    return KFoldObjective(_gbm, _log_loss, x[cv], y[cv], x[te], y[te], n_folds, GBM_BOUNDS, seed)
