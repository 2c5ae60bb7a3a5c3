"""Ask/tell driver for black boxes that cannot be traced (a model being trained).

``ask()`` returns the next ``(x, z)``; ``tell(x, z, y)`` records the result. Each ask
after the initial design runs the decision stages' compiled stages
(:mod:`mumbo_jax.bo.stages`) on the data told so far; the same seed gives the same
decisions as :func:`mumbo_jax.bo.compiled.run_compiled`.

Asynchronous use: every ask hands out a *pending* evaluation until it is told (in any
order) or cancelled; further asks take the pending ones into account (kriging-believer
fantasies by default, or GIBBON's pending-aware gain), so several evaluations can run
at once. With nothing pending the decisions are exactly the sequential ones.
"""

from __future__ import annotations

import dataclasses
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from mumbo_jax.bo import refits, rules, safe_recommendation, stages, told_values
from mumbo_jax.bo.asktell_checks import BOX_TOL
from mumbo_jax.bo.asktell_checks import check_design as _check_design, check_state as _check_state
from mumbo_jax.bo.asktell_checks import STATE_KEYS, real as _real, seed as _seed
from mumbo_jax.runtime.prefetch import Prefetcher, prefetch_enabled
from mumbo_jax.bo.settings import BOSettings, Task
from mumbo_jax.runtime.timing import Timings, timed
from mumbo_jax.gp import costmodel, marginal, models, moments, posterior
from mumbo_jax.gp.precision import require_x64

__all__ = ["AskTell", "BOX_TOL", "FAILURE_MARGIN", "LARGE_N", "LargeDataWarning", "Pending"]

MAX_PRESUMED = 3  # proposals per ask the failure classifier may turn down
LARGE_N = 1000  # told evaluations beyond which each ask's exact GP becomes slow (a warning, once)
FAILURE_MARGIN = 1.0  # a failed evaluation is modelled as the worst y told minus this share of the y range


@dataclasses.dataclass(frozen=True)
class Pending:
    """An evaluation handed out by :meth:`AskTell.ask` and not told or cancelled yet.

    Attributes:
        x: the input (a tuple of d floats); z: the fidelity (int, or float when continuous).
        design_index: its row of the initial design, or ``None`` for a BO proposal.
    """

    x: tuple
    z: float | int
    design_index: int | None = None

    def to_dict(self) -> dict:
        return {"x": list(self.x), "z": self.z, "design_index": self.design_index}


class LargeDataWarning(UserWarning):
    """An AskTell holds so many evaluations that each ask (an exact GP fit) is slow."""


class AskTell:
    """Ask/tell optimiser for black boxes.

    ``ask()`` returns the next ``(x, z)``; ``tell(x, z, y, cost=None)`` records a result
    (y in maximisation convention: negate a loss). The first asks return the initial
    design. ``state_dict()`` is plain data (lists and floats) that :meth:`from_state`
    restores exactly.

    ``tell`` accepts x as one point, a flat list or 1-D array of d numbers inside the search
    box (a [1, d] array is a ValueError; x further outside than ``BOX_TOL`` of the box width
    is too: a point the model cannot represent is a bug in the caller; rounding within
    ``BOX_TOL`` is clipped), z as an int, an integral float (``1.0``) or a numpy scalar for
    discrete fidelities (a float within the bounds for a continuous one), and y (and cost)
    as a finite real number or a 1-element array, |y| <= 1e100 (:mod:`mumbo_jax.bo.told_values`).

    Pending evaluations: each ``ask()`` registers its answer as pending (listed by
    :meth:`pending`) until ``tell`` of the same ``(x, z)`` or :meth:`cancel`. An ask
    while evaluations are pending hands out the next design point, or after the design
    conditions the decision on the pending ones: with ``pending="believer"`` (default)
    the fitted posterior is conditioned on them at their posterior mean (kriging
    believer, :func:`mumbo_jax.bo.stages.believe_stage`) before the rule runs as usual
    (any rule); with ``pending="gibbon"`` (max-value rules only) the next point
    maximises GIBBON's pending-aware gain per unit cost over a random candidate set
    (:func:`mumbo_jax.bo.stages.gibbon_stage`). Results may be told in any order. A
    tell that matches no pending point is the user's own evaluation (recorded as such,
    and counted towards the initial design while it lasts); a tell of a point asked and
    already told, with no pending copy left, is a ValueError (a pending point told
    twice). ``state_dict()`` keeps the pending points.

    Failed evaluations: :meth:`tell_failure` records a point whose evaluation failed
    (diverged, crashed, returned NaN). The model sees each as an observation of a
    pessimistic value, the worst y told so far minus :data:`FAILURE_MARGIN` of the range
    of the y told (recomputed at every ask, as SMAC imputes failed runs), so the rule
    stops proposing the failing region; and a proposal that a GP classifier of success
    against failure (:meth:`likely_failure`) expects to fail is imputed as a failure for
    that ask and the rule proposes again (at most :data:`MAX_PRESUMED` times), so a
    failing region learnt from a few points is avoided elsewhere along it too. The
    recommendation (:meth:`incumbent`) comes from the successful evaluations alone, and
    never lies where they fail (:mod:`mumbo_jax.bo.safe_recommendation`).

    Examples:
        >>> import jax; jax.config.update("jax_enable_x64", True)
        >>> import mumbo_jax as mj
        >>> spec = mj.icm_model(bounds=[(0.0, 1.0)], n_fidelities=2)  # fidelity 0 is the target
        >>> task = mj.make_task(spec, mj.target_fidelity(0), mj.discrete_fidelities([10.0, 1.0]))
        >>> opt = mj.AskTell(task, mj.BOSettings(), seed=0)  # the defaults: the robust rule
        >>> for _ in range(opt.n_design + 2):  # the initial design, then two BO steps
        ...     x, z = opt.ask()
        ...     opt.tell(x, z, -(x[0] - 0.3) ** 2 - 0.1 * z)  # your evaluation (maximised)
        >>> x_best, mean, sd = opt.recommendation()

    Args:
        task: model, target and fidelity space (:func:`mumbo_jax.bo.settings.make_task`).
        settings: the decision rule's settings.
        seed: integer seed; the same seed gives the same decisions as
            :func:`mumbo_jax.bo.compiled.run_compiled`.
        cost_model: optional :class:`mumbo_jax.gp.costmodel.CostModel` (e.g.
            :func:`mumbo_jax.gp.costmodel.cost_model_for`): before each proposal a GP on
            log cost is fitted to the costs told so far and the acquisition is divided by
            its prediction c(x, z) instead of the task's known cost (tell the measured
            cost, e.g. seconds). Its fitting time counts in ``timings[k].fit``; the last
            fit is ``self.cost_fit``. ``None``: the known cost.
        design: optional initial design ``(x [n0, d], z [n0])`` replacing the paper's
            default (:func:`mumbo_jax.bo.stages.initial_design`). The same ``design``
            (and ``cost_model``) must be passed to :meth:`from_state`.
        pending: how pending evaluations enter an ask: ``"believer"`` (kriging-believer
            fantasies, any rule) or ``"gibbon"`` (GIBBON's pending-aware gain, rules
            that sample g*). No effect while nothing is pending.
        prefetch: compile on a background thread, while the black box runs, the programs
            of the first BO step from the first design ask on, and those of the next
            buffer size once the buffer is half full (:mod:`mumbo_jax.runtime.prefetch`; the
            same decisions). None: ``$MUMBO_JAX_PREFETCH``, off unless switched on
            (:func:`mumbo_jax.runtime.process_options.enable`, as the CLI does).
    """

    def __init__(self, task: Task, settings: BOSettings = BOSettings(), seed: int = 0,
                 cost_model: costmodel.CostModel | None = None, design=None, pending: str = "believer",
                 prefetch: bool | None = None):
        require_x64("constructing an AskTell")  # before the user's black box runs the design
        if not isinstance(task, Task):
            raise ValueError(f"task must be a mumbo_jax.bo.settings.Task (make_task), got {type(task).__name__}")
        rules.check_rule_for_task(settings.strategy, task)
        if cost_model is not None and not isinstance(cost_model, costmodel.CostModel):
            raise ValueError(f"cost_model must be a mumbo_jax.gp.costmodel.CostModel, got {type(cost_model).__name__}")
        if settings.batch.size != 1:
            raise ValueError(f"batch.size = {settings.batch.size} is for the compiled loop (run_compiled, "
                             "mumbo-jax run/compare); with ask/tell, ask several times before telling (each ask "
                             "takes the pending ones into account) or use mumbo-jax tune --workers N")
        if pending not in stages.PENDING_MODES:
            raise ValueError(f"pending must be one of {', '.join(stages.PENDING_MODES)}, got {pending!r}")
        if pending == "gibbon" and not rules.rule_for(settings).uses_gstar:
            raise ValueError(f"pending='gibbon' needs a rule that samples g* (mumbo, mes, ...); strategy "
                             f"{settings.strategy!r} does not: use pending='believer'")
        self.task, self.settings, self.seed, self.pending_mode = task, settings, _seed(seed), pending
        self.cost_model, self.cost_fit = cost_model, None
        self.key = jax.random.PRNGKey(self.seed)
        design_key, self.loop_key = jax.random.split(self.key)
        x0, z0 = stages.initial_design(task, design_key) if design is None else _check_design(task, design)
        self.design = [(np.asarray(x), float(z)) for x, z in zip(x0, z0)]
        self.n_design = len(self.design)
        self.x, self.z, self.y, self.costs = [], [], [], []
        self.params = stages.as_params(models.default_params(task.spec))
        self.timings: list[Timings] = []
        self.last_fit = None  # (number of points, posterior, buffers) of the last fit
        self.schedule, self._carry = refits.Schedule(), None  # the refit schedule, (posterior, rows) it carries
        self._pending: list[Pending] = []
        self._design_done: set[int] = set()  # design rows told (or consumed by a user's own tell)
        self._asked_told: list[tuple] = []  # (x, z) of asked points already told
        self.failed: list[tuple] = []  # (x, z) of failed evaluations (tell_failure), modelled pessimistically
        self._classifier_params = None  # warm start of the failure classifier's fit
        self._prefetcher = Prefetcher(prefetch_enabled(prefetch, default=True))

    # -- the protocol
    def ask(self):
        """Next ``(x, z)`` to evaluate (x a plain float64 numpy array [d], z a Python int, or a
        float when continuous), registered as pending: the initial design first, in order,
        then the rule's proposal given the data told so far and the pending evaluations."""
        i = self._next_design_index()
        if i is not None:
            if not self.x and not self._pending:  # the first ask: compile the first BO step meanwhile
                self._prefetch_first_size()
            x, z = self.design[i]
            self._pending.append(Pending(tuple(map(float, x)), self._fidelity(z), i))
            return np.array(x, float), self._fidelity(z)
        if not self.x:
            raise ValueError(f"nothing told yet and all {self.n_design} design points are pending: tell at least "
                             "one result before asking for a BO step")
        x, z, t = self._propose()
        if self.failed and self.y and not self.settings.mcmc.samples:
            classifier = self.failure_classifier()
            presumed = []  # proposals the classifier expects to fail: imputed as failures for this ask only
            while len(presumed) < MAX_PRESUMED and self.likely_failure(classifier, x, z):
                presumed.append((tuple(map(float, x)), z))
                x, z, t2 = self._propose(presumed)
                t = Timings(t.fit + t2.fit, t.gstar + t2.gstar, t.maximise + t2.maximise)
        self.timings.append(t)
        self._pending.append(Pending(tuple(map(float, x)), z, None))
        return x, z

    def failure_classifier(self) -> posterior.Posterior:
        """The posterior of a GP fitted to the labels +1 (told) / -1 (failed, needs one
        of each): a least-squares GP classifier on the task's own model, its
        hyper-parameters fitted by marginal likelihood, so it learns which inputs the
        failures depend on. Read it with :meth:`likely_failure`."""
        xs = np.asarray([*self.x, *(np.asarray(fx) for fx, _ in self.failed)])
        zs = np.asarray([*self.z, *(float(fz) for _, fz in self.failed)])
        labels = np.asarray([1.0] * len(self.x) + [-1.0] * len(self.failed))
        buffers = stages.pad_buffers(xs, zs, labels, stages.buffer_size(len(labels)))
        params = self._classifier_params
        if params is None:
            params = stages.as_params(models.default_params(self.task.spec))
        key = jax.random.fold_in(jax.random.fold_in(self.loop_key, len(labels)), 0x6661696c)
        post = stages.fit_stage(self.settings, self.task, buffers, params, key, True)
        self._classifier_params = post.params
        return post

    @staticmethod
    def likely_failure(classifier: posterior.Posterior, x, z) -> bool:
        """Whether the :meth:`failure_classifier`'s mean at ``x [d]``, ``z`` is negative
        (failure more likely than success)."""
        mean, _ = moments.predict(classifier, np.asarray(x, float)[None, :], np.asarray([z]))
        return float(np.asarray(mean)[0]) < 0.0

    def _propose(self, presumed=()):
        """The rule's proposal ``(x, z, Timings)`` given the data told (failures, and the
        ``presumed`` ones, imputed) and the pending evaluations; updates the warm-start
        parameters and ``last_fit``."""
        k = len(self.x) + len(self._pending) - self.n_design
        buffers = self.buffers(presumed=presumed)
        n_rows = self._n_rows() + (len(presumed) if self.y else 0)
        k_fit, k_gstar, k_max = stages.step_keys(self.loop_key, k)
        if self._pending and self.settings.mcmc.samples:
            raise ValueError(f"{len(self._pending)} evaluation(s) pending: asking again before they are told needs "
                             "mcmc.samples = 0 (pending points on marginalised hyper-parameters are not built); "
                             "tell or cancel them first")
        clean = not self.failed and not presumed  # imputed failures move with every y: no carried factor
        plan = refits.plan(self.settings, k, n_rows, self.schedule if clean else refits.Schedule())
        post, t_fit = timed(refits.step_posterior, self.settings, self.task, buffers, n_rows, self.params, k_fit,
                            plan, self._carried() if plan[2] else None)
        if clean:
            self.schedule, self._carry = refits.after(self.schedule, n_rows, *plan), (post, n_rows)
        cost = None
        if self.cost_model is not None:
            self.cost_fit, t_cost = timed(costmodel.fit_cost, self.cost_model, np.asarray(self.x),
                                          np.asarray(self.z), np.asarray(self.costs), jax.random.fold_in(k_fit, 1))
            cost = costmodel.cost_function(self.cost_fit)
            t_fit += t_cost
        decide_post = post
        if self._pending:
            xp = np.asarray([p.x for p in self._pending])
            zp = np.asarray([p.z for p in self._pending], float)
            if self.pending_mode == "believer":
                believe = refits.believe if clean and refits.incremental(self.settings, n_rows) else stages.believe_stage
                decide_post, t_fant = timed(believe, self.task, post, buffers, n_rows, xp, zp)
                t_fit += t_fant
        decide_post, t_approx = timed(stages.decision_posterior, self.settings, decide_post, n_rows)
        gstar, t_gstar = timed(stages.gstar_stage, self.settings, self.task, decide_post, k_gstar)
        t_gstar += t_approx
        if self._pending and self.pending_mode == "gibbon":
            prop, t_max = timed(stages.gibbon_stage, self.settings, self.task, post, gstar, k_max, xp, zp, cost)
        else:
            prop, t_max = timed(stages.maximise_stage, self.settings, self.task, decide_post, gstar, k_max, cost,
                                stages.as_count(self.n_design))
        self.params = post.params
        self.last_fit = (n_rows, post, buffers)
        rows = buffers.x.shape[0]
        size = stages.buffer_size(rows)
        # the next size's programs, once at most half the rows that size adds are left free
        # here (a short session that never gets near it compiles nothing); the sequential
        # decision's: with evaluations pending, the fit and the recommendation are among them
        if not presumed and 2 * (rows - n_rows) <= size - rows:
            self._prefetcher.start(size, functools.partial(self._warm_up, buffers, n_rows, size, post.params,
                                                           (k_fit, k_gstar, k_max), cost))
        return np.array(prop.x, float), self._fidelity(prop.z), Timings(t_fit, t_gstar, t_max)

    def _carried(self):
        """The carried ``(posterior, rows)``; after :meth:`from_state`, rebuilt as the
        uninterrupted run had it: the ``schedule.anchor`` rows conditioned afresh on the
        saved hyper-parameters (the refit's own program and buffer size), the appends
        replayed from there by the next ask."""
        if self._carry is None:
            n = self.schedule.anchor
            b = stages.pad_buffers(np.asarray(self.x[:n], float), np.asarray(self.z[:n]), np.asarray(self.y[:n]),
                                   stages.buffer_size(n))
            post = stages.fit_stage(self.settings, self.task, b, self.params, self.loop_key, False, False)
            self._carry = (post, n)
        return self._carry

    def _prefetch_first_size(self):
        """Start compiling the programs of the first BO step (the design's buffer size)
        while the design is evaluated: on the design's points with stand-in values (the
        programs depend on the shapes only). Not with a cost model, whose fitted cost
        enters the maximisation's program with shapes known only after its fit."""
        if self.cost_model is not None:
            return
        x = np.asarray([x for x, _ in self.design], float).reshape(self.n_design, self.task.spec.dim)
        z = np.asarray([z for _, z in self.design], float)
        stand_in = np.random.default_rng(0).standard_normal(self.n_design)
        size = stages.buffer_size(self.n_design)
        buffers = stages.Buffers(x, z, stand_in, np.ones(self.n_design))
        self._prefetcher.start(size, functools.partial(self._warm_up, buffers, self.n_design, size, self.params,
                                                       stages.step_keys(self.loop_key, 0), None))

    def _warm_up(self, buffers: stages.Buffers, n_rows: int, size: int, params, keys, cost):
        """The programs of one ask and of :meth:`recommendation` at buffer ``size``
        (:mod:`mumbo_jax.runtime.prefetch`), called once on the first ``n_rows`` of ``buffers``
        padded to it, with arguments of the kinds :meth:`_propose` passes; the results
        are thrown away."""
        k_fit, k_gstar, k_max = keys
        grown = stages.pad_buffers(*(np.asarray(a)[:n_rows] for a in buffers[:3]), size)
        # refit False: the same program (refit is a traced branch), without running a refit
        post = stages.fit_stage(self.settings, self.task, grown, params, k_fit, False, False)
        gstar = stages.gstar_stage(self.settings, self.task, post, k_gstar)
        prop = stages.maximise_stage(self.settings, self.task, post, gstar, k_max, cost, stages.as_count(self.n_design))
        rec = self.settings.recommendation
        return prop, stages.recommend(self.task, post, grown.x, rec.rule, rec.calibrated)

    def pending(self) -> list[Pending]:
        """The evaluations handed out and not told or cancelled yet, oldest first."""
        return list(self._pending)

    def cancel(self, x, z):
        """Drop the pending evaluation at ``(x, z)`` (it will not be told); a cancelled
        design point is handed out again by a later ask. ValueError if none is pending."""
        x, z = self._checked_point(x, z)
        j = self._match(self._pending, x, z)
        if j is None:
            raise ValueError(f"no pending evaluation at x={x.tolist()}, z={z}: nothing to cancel "
                             f"({len(self._pending)} pending)")
        self._pending.pop(j)

    def tell(self, x, z, y, cost=None):
        """Record an evaluation (see the class docstring for what is accepted): a
        pending point's result, in any order, or the user's own evaluation."""
        x, z = self._checked_point(x, z)
        y = told_values.checked_y(y, x, z, self.y)
        cost = _real("cost", cost, allow_none=True)
        if cost is not None and cost <= 0:
            raise ValueError(f"cost must be > 0, got {cost}")
        j = self._match(self._pending, x, z)
        if j is None and self._match([Pending(tuple(a), b) for a, b in self._asked_told], x, z) is not None:
            raise ValueError(f"x={x.tolist()}, z={z} was asked once and its result was already told: a pending "
                             "point told twice (nothing is pending there now)")
        c = float(self.task.space.cost(jnp.asarray([z]))[0]) if cost is None else cost
        if j is not None:
            done = self._pending.pop(j)
            self._asked_told.append((done.x, done.z))
            if done.design_index is not None:
                self._design_done.add(done.design_index)
        elif (i := self._next_design_index()) is not None:  # a user's own point counts towards the design
            self._design_done.add(i)
        self.x.append(x)
        self.z.append(float(z))
        self.y.append(y)
        self.costs.append(c)
        if len(self.x) == LARGE_N + 1:
            warnings.warn(f"this AskTell holds more than {LARGE_N} evaluations: each ask decides on an exact GP "
                          "of all of them (time per candidate grows as n^2, memory as n^2; refits thin out as "
                          "fit.refit_growth says); see docs/howto/long-runs.md, Thousands of points",
                          LargeDataWarning, stacklevel=2)

    def tell_failure(self, x, z):
        """Record that evaluating ``(x, z)`` failed, for the model (see the class
        docstring: a pessimistic imputed value). Pending points are not affected (a
        failed pending point stays pending until it is told or cancelled); a point
        already recorded as failed is recorded once."""
        x, z = self._checked_point(x, z)
        if self._match([Pending(tuple(a), b) for a, b in self.failed], x, z) is None:
            self.failed.append((tuple(map(float, x)), z))

    def imputed_value(self) -> float | None:
        """The y the model sees at each failed evaluation: the worst y told minus
        :data:`FAILURE_MARGIN` of the range of the y told (of their magnitude, or 1, when
        they are all equal); ``None`` before any y is told."""
        if not self.y:
            return None
        y = np.asarray(self.y, float)
        lo, hi = float(y.min()), float(y.max())
        spread = hi - lo if hi > lo else max(abs(lo), 1.0)
        return lo - FAILURE_MARGIN * spread

    def incumbent(self):
        """``(x, posterior mean of g)`` of the x recommended by ``settings.recommendation.rule``
        (:mod:`mumbo_jax.bo.incumbent`: an evaluated x, or under ``"global"`` the
        maximiser of the posterior mean of g over the box).

        Conditions on all the data told so far with the hyper-parameters of the last
        fit (the model's defaults before the first BO step): no refit, and the posterior
        of the last ask reused outright if nothing was told since."""
        x, mu, _ = self.recommendation()
        return x, mu

    def recommendation(self):
        """``(x, mean, sd)``: :meth:`incumbent` with the model's sd of g at x, widened by
        the leave-one-out scale of the target's observations unless
        ``settings.recommendation.calibration = "none"`` (:func:`mumbo_jax.bo.incumbent.interval_scale`):
        ``mean +- 1.96 sd`` is the interval to trust for the value at x (units of y,
        noise excluded).

        With failed evaluations recorded (:meth:`tell_failure`) the recommendation comes
        from a model of the successful evaluations alone (refitted from the last
        hyper-parameters, without the imputed values, which steer the decisions only)."""
        if not self.x:
            raise ValueError("no evaluations yet: tell at least one before asking for the incumbent")
        if self.failed:
            buffers = self.buffers(failures=False)
            k_fit, _, _ = stages.step_keys(self.loop_key, max(len(self.x) - self.n_design, 0))
            post = stages.fit_stage(self.settings, self.task, buffers, self.params, k_fit, True)
        elif self.last_fit is not None and self.last_fit[0] == self._n_rows():
            _, post, buffers = self.last_fit
        else:
            buffers = self.buffers()
            k_fit, _, _ = stages.step_keys(self.loop_key, max(len(self.x) - self.n_design, 0))
            post = stages.fit_stage(self.settings, self.task, buffers, self.params, k_fit, False)
            self.last_fit = (self._n_rows(), post, buffers)
        rec = self.settings.recommendation
        x, mu, sd = stages.recommend(self.task, post, buffers.x, rec.rule, rec.calibrated)
        return safe_recommendation.checked(self, post, buffers, x, mu, sd)

    @property
    def in_initial_design(self) -> bool:
        """Whether the initial design is incomplete: fewer of its points told (a user's
        own tells count) than it has. It stays True while its last points are pending."""
        return len(self._design_done) < self.n_design

    @property
    def asks_design(self) -> bool:
        """Whether the next ask hands out a design point (False once every design point
        is told or pending)."""
        return self._next_design_index() is not None

    # -- helpers
    def _next_design_index(self):
        taken = self._design_done | {p.design_index for p in self._pending}
        return next((i for i in range(self.n_design) if i not in taken), None)

    def _checked_point(self, x, z):
        """``(x [d] float array clipped to the box, z)`` or a ValueError."""
        spec = self.task.spec
        x = told_values.checked_x(x, spec.dim)
        if not np.all(np.isfinite(x)):
            raise ValueError(f"x must be finite, got {x.tolist()}")
        b = np.asarray(spec.bounds)
        tol = BOX_TOL * (b[:, 1] - b[:, 0])
        if np.any(x < b[:, 0] - tol) or np.any(x > b[:, 1] + tol):
            raise ValueError(f"x {x.tolist()} lies outside the search box {b.tolist()}")
        return np.clip(x, b[:, 0], b[:, 1]), self._told_fidelity(z)

    def _match(self, points, x, z):
        """Index of the first of ``points`` at ``(x, z)`` (x within ``BOX_TOL`` of the box
        width per coordinate; z equal), or ``None``."""
        b = np.asarray(self.task.spec.bounds)
        tol = BOX_TOL * (b[:, 1] - b[:, 0])
        for j, p in enumerate(points):
            if float(p.z) == float(z) and np.all(np.abs(np.asarray(p.x) - x) <= tol):
                return j
        return None

    def _n_rows(self) -> int:
        """Rows of the model's data: the told evaluations, then the failed ones (once a y is told)."""
        return len(self.x) + (len(self.failed) if self.y else 0)

    def buffers(self, failures: bool = True, presumed=()) -> stages.Buffers:
        """The data as the model sees them (:class:`mumbo_jax.bo.stages.Buffers`, raw units,
        :func:`mumbo_jax.bo.stages.buffer_size` rows): the told evaluations, then
        (``failures``, once a y is told) the failed ones and the ``presumed`` failures
        (``(x, z)`` pairs) at :meth:`imputed_value`."""
        x, z, y = list(self.x), list(self.z), list(self.y)
        bad_points = [*self.failed, *presumed] if failures else []
        if bad_points and self.y:
            bad = self.imputed_value()
            x += [np.asarray(fx) for fx, _ in bad_points]
            z += [float(fz) for _, fz in bad_points]
            y += [bad] * len(bad_points)
        n = len(x)
        size = stages.buffer_size(n)
        self._prefetcher.wait(size)  # its programs may be compiling in the background
        return stages.pad_buffers(np.asarray(x, float).reshape(n, self.task.spec.dim), np.asarray(z),
                                  np.asarray(y), size)

    def _fidelity(self, z):
        return int(z) if self.task.spec.discrete else float(z)

    def _told_fidelity(self, z):
        """A told fidelity as int (discrete) or float (continuous), or a ValueError."""
        spec = self.task.spec
        v = _real("z", z)
        if spec.discrete:
            if v != int(v) or not 0 <= v < spec.n_fidelities:
                raise ValueError(f"fidelity {v:g} does not exist; this task has fidelities 0..{spec.n_fidelities - 1}")
            return int(v)
        lo, hi = spec.fidelity_bounds
        if not lo <= v <= hi:
            raise ValueError(f"fidelity {v:g} is outside the fidelity bounds [{lo:g}, {hi:g}]")
        return v

    # -- plain-data state
    def state_dict(self) -> dict:
        return {
            "seed": self.seed,
            "x": [list(map(float, x)) for x in self.x],
            "z": list(self.z),
            "y": list(self.y),
            "costs": list(self.costs),
            "params": {k: np.asarray(v).tolist() for k, v in self.params.items()},
            "pending": [p.to_dict() for p in self._pending],
            "design_done": sorted(self._design_done),
            "asked_told": [[list(x), z] for x, z in self._asked_told],
            "failed": [[list(x), z] for x, z in self.failed],
            "refits": list(self.schedule),
        }

    @classmethod
    def from_state(cls, task: Task, settings: BOSettings, state: dict,
                   cost_model: costmodel.CostModel | None = None, design=None,
                   pending: str = "believer", prefetch: bool | None = None) -> "AskTell":
        """The optimiser of :meth:`state_dict` (pass the same ``design``, ``cost_model``
        and ``pending``; ``prefetch`` as in the constructor). The state's pending points stay pending; states without the
        keys ``pending``/``design_done`` (older ones) count told points towards the
        design in order. Hyper-parameter samples saved under another ``mcmc.samples``
        restart from their MAP (sample 0).

        Raises:
            ValueError: a malformed state, naming the field (``state['y'] has 0 entries
                but state['x'] has 1 rows``, ``state is missing 'seed'``, ``seed must be an
                integer, got float 1.5``, a point outside the box, ...).
        """
        if not isinstance(state, dict):
            raise ValueError(f"state must be a dict (AskTell.state_dict()), got {type(state).__name__}")
        if "seed" not in state:
            raise ValueError(f"state is missing 'seed' (AskTell.state_dict() has {', '.join(STATE_KEYS)})")
        opt = cls(task, settings, _seed(state["seed"], "state['seed']"), cost_model=cost_model, design=design,
                  pending=pending, prefetch=prefetch)
        checked = _check_state(opt, state)
        for x, z, i in checked["pending"]:
            opt._pending.append(Pending(tuple(map(float, x)), z, i))
        for x, z, y, c in zip(checked["x"], checked["z"], checked["y"], checked["costs"]):
            opt.tell(x, z, y, c)
        if "design_done" in checked:
            opt._design_done = checked["design_done"]
        opt._asked_told = [(tuple(map(float, x)), opt._fidelity(z)) for x, z in checked["asked_told"]]
        for x, z in checked["failed"]:
            opt.tell_failure(x, z)
        params = checked["params"]
        if marginal.n_samples(params) not in (0, settings.mcmc.samples):  # saved with another mcmc.samples:
            params = marginal.map_params(params)  # warm-start from the saved MAP
        opt.params = stages.as_params(params)
        opt.schedule = refits.Schedule(*checked["refits"])
        return opt
