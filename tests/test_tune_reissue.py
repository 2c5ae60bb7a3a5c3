"""An evaluation reissued after one crash is not issued again after a second crash
once its reissue finished (it would be journaled twice)."""

from mumbo_jax.run.tune import schedule


def issued(i, point, reissue_of=None):
    return {"type": "issued", "id": i, "point": point, "attempt": 0, "source": "bo", "reissue_of": reissue_of,
            "holds": {"u": [0.1 * point], "z": 0, "design_index": None}}


def result(i, point, status="ok"):
    return {"type": "eval", "id": i, "point": point, "attempt": 0, "source": "bo", "status": status,
            "replaces": None}


def test_a_finished_reissue_stands_for_the_lost_original():
    iss = [issued(0, 0), issued(1, 1), issued(2, 1, reissue_of=1)]  # 1 lost with crash 1, reissued as 2
    lost, owed = schedule.unfinished([result(0, 0), result(2, 1)], iss)
    assert lost == [] and owed == []
    lost, _ = schedule.unfinished([result(0, 0)], iss)  # the reissue was lost with crash 2: issue it again
    assert [r["id"] for r in lost] == [2]
    iss.append(issued(3, 1, reissue_of=2))
    lost, _ = schedule.unfinished([result(0, 0), result(3, 1)], iss)
    assert lost == []


def test_replay_keeps_one_result_per_evaluation():
    evals = [result(0, 0), result(2, 1), result(5, 1), result(6, 2)]
    assert [r["id"] for r in schedule.first_results(evals)] == [0, 2, 6]
