"""One process of a group of two joined by `distributed.join_group`, with nothing to train.

    python -m harness.group_member ADDRESS RANK HEARTBEAT_S killed|finished

Prints `joined` once the group has formed. `killed`: process 1 sleeps until it is killed; process 0 waits for a
line on stdin (process 1 is dead), stays busy for twice the heartbeat timeout, prints the reasons its watch gave
for a lost group (a list) and leaves at once, as the lab leaves a broken group (JAX's shutdown barrier would wait
for process 1, then abort). `finished`: process 1 exits normally at once; process 0 stays busy as above, prints
the reasons and exits normally. Started by tests/system/test_distributed.py."""

import os
import sys
import time

from pmap_core.train import distributed


def main(address: str, rank: int, heartbeat_s: int, scene: str) -> None:
    lost: list[str] = []
    distributed.join_group(address, 2, rank, timeout_s=60, heartbeat_timeout_s=heartbeat_s, on_lost=lost.append)
    print("joined", flush=True)
    if rank == 1:
        if scene == "killed":
            time.sleep(600)
        return
    if scene == "killed":
        sys.stdin.readline()
    time.sleep(2 * heartbeat_s + 1)
    print(lost, flush=True)
    if scene == "killed":
        os._exit(0)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
