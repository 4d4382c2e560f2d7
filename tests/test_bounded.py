"""`hls.bounded.text_within`: the result of a computation run in a forked child, or None past its
limit of CPU seconds."""

import time

from hls.bounded import WALL_FACTOR, text_within


def test_a_result_comes_back_whole():
    text = "".join(chr(48 + k % 40) for k in range(300_000))  # more than a pipe holds at once
    assert text_within(lambda: text, 5.0) == text


def test_a_computation_that_does_not_end_is_cut_off():
    def spin() -> str:
        while True:
            pass

    assert text_within(spin, 0.2) is None


def test_a_child_that_uses_no_cpu_is_given_up_by_the_wall_clock():
    def asleep() -> str:
        time.sleep(60 * WALL_FACTOR)
        return "woke"

    assert text_within(asleep, 0.05) is None


def test_an_error_in_the_child_gives_no_result():
    def fails() -> str:
        raise ValueError("no")

    assert text_within(fails, 5.0) is None
