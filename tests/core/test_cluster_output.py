"""How `launch --via mpirun|srun` reads its processes back out of the launcher's tagged output, and the command
lines it gives mpirun and srun (no process is started here)."""

import io

import pytest

from pmap_core.train import launch

JSON = '{"final_loss": 0.17833246290683746, "pad": "' + "x" * 2500 + '"}'


def lines_of(via: str, text: str, stream: str = "stderr", processes: int = 2) -> list[tuple[int, str, str]]:
    group = launch.ClusterGroup(via, ["train"], processes, 2, timeout_s=1)
    group._pump(io.StringIO(text), stream)
    out = []
    while not group._lines.empty():
        line = group._lines.get()
        out.append((line.process, line.stream, line.text))
    return out, group


def test_mpirun_chunks_cut_mid_line_are_joined_per_process_and_stream():
    # What Open MPI 4 wrote here: a line cut into chunks, each tagged; one process's chunk ending another's line.
    text = ("[1,0]<stderr>:[Gloo] Rank [1,0]<stderr>:1[1,0]<stderr>: is connected to [1,0]<stderr>:3[1,0]<stderr>:\n"
            "[1,1]<stderr>:joined the group: process 1 of 2, 2 of 4 devices, pid 10687 on elsewhere[1,1]<stderr>:\n"
            "[1,0]<stderr>:step 3/5[1,1]<stderr>:step 3/5\n"
            "[1,0]<stderr>:  loss 0.5\n"
            "--------------------------------------------------------------------------\n")
    lines, group = lines_of(launch.MPIRUN, text)
    assert lines == [
        (0, "stderr", "[Gloo] Rank 1 is connected to 3"),
        (1, "stderr", "joined the group: process 1 of 2, 2 of 4 devices, pid 10687 on elsewhere"),
        (1, "stderr", "step 3/5"),
        (0, "stderr", "step 3/5  loss 0.5"),
        (-1, "launcher", "mpirun: " + "-" * 74),
    ]
    assert group._joined == [False, True] and group._pids == {}  # another host's pid is not this host's


def test_srun_pieces_of_a_long_line_are_joined_and_stdout_kept_per_process():
    pieces = [JSON[i:i + launch.SRUN_PIECE] for i in range(0, len(JSON), launch.SRUN_PIECE)]
    text = "".join(f"0: {piece}\n" for piece in pieces) + "1: {}\nsrun: error: localhost: task 1: Killed\n"
    lines, group = lines_of(launch.SRUN, text, stream="stdout")
    assert [line[:2] for line in lines] == [(0, "stdout"), (1, "stdout"), (-1, "launcher")]
    assert lines[0][2] == JSON and group.outcome().stdout == (JSON, "{}")
    assert lines[2][2] == "srun: error: localhost: task 1: Killed"


def test_launcher_command_lines():
    worker = ["python", "-u", "-m", "pmap_core", "train", "--cluster", "auto"]
    mpirun = launch.cluster_argv(launch.MPIRUN, 2, worker, ["PMAP_LAB_DEVICES", "PYTHONPATH"], as_root=True)
    assert mpirun[:3] == ["mpirun", "-np", "2"] and "--tag-output" in mpirun and "--allow-run-as-root" in mpirun
    assert mpirun[mpirun.index("odls_base_sigkill_timeout") + 1] == "2"
    assert mpirun[-len(worker) - 4:-len(worker)] == ["-x", "PMAP_LAB_DEVICES", "-x", "PYTHONPATH"]
    srun = launch.cluster_argv(launch.SRUN, 3, worker, ["PMAP_LAB_DEVICES"])
    assert srun[:3] == ["srun", "--ntasks", "3"] and "--label" in srun and "--kill-on-bad-exit=1" in srun
    assert srun[-len(worker):] == worker
    with pytest.raises(ValueError):
        launch.cluster_argv(launch.LOCAL, 2, worker, [])
