"""tuning.png: every failure has its own mark (failures at the same moment stack), and
the legends sit beside the panels, covering no data."""

from mumbo_jax.run.tune.results import failure_heights, plot_tuning, tuning_figure


def results(failed_times):
    ok = [{"status": "ok", "z": i % 2, "elapsed_s": float(t), "score": 0.5 + 0.01 * t} for i, t in enumerate(range(10))]
    bad = [{"status": "failed", "z": 0, "elapsed_s": t, "score": None} for t in failed_times]
    n = len(ok)
    return {"evaluations": ok + bad, "fidelity": {"kind": "discrete", "values": [1.0, 0.5]},
            "curves": {"elapsed_s": [float(t) for t in range(n)], "best_score_at_target": [0.5] * n,
                       "evaluation_s": [0.8 * t for t in range(n)], "optimiser_s": [0.1 * t for t in range(n)],
                       "other_s": [0.1 * t for t in range(n)]},
            "incumbent": {"predicted_score": 0.6}, "direction": "maximise", "cost": {"spent": 12.0},
            "wall_clock": {"total_s": 10.0, "evaluation_s": 8.0, "optimiser_s": 1.0, "other_s": 1.0}}


def test_failures_at_the_same_moment_get_a_mark_each():
    assert failure_heights([3.0, 3.0, 3.05, 7.0], span=10.0) == [0.03, 0.08, 0.13, 0.03]
    fig = tuning_figure(results([3.0, 3.0, 7.0]))
    ax = fig.axes[0]
    marks = [c for c in ax.collections if c.get_label() == "failed (3)"][0].get_offsets()
    assert len({tuple(p) for p in marks.tolist()}) == 3  # three distinct marks for "failed (3)"


def test_the_legends_cover_no_data(tmp_path):
    fig = tuning_figure(results([3.0]))
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    for ax in fig.axes[:2]:
        legend = ax.get_legend().get_window_extent(renderer)
        panel = ax.get_window_extent(renderer)
        assert legend.x0 >= panel.x1, (legend, panel)  # beside the panel, not over it
    assert fig.get_window_extent(renderer).x1 >= max(ax.get_legend().get_window_extent(renderer).x1
                                                     for ax in fig.axes[:2]) - 1  # and inside the figure
    path = plot_tuning(results([3.0]), tmp_path / "tuning.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
