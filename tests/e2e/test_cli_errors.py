"""`raympp serve` behaves like a server when it cannot start: bad arguments are argparse
errors (exit 2, a clear message), an address it cannot listen on is one line on stderr and
exit 1 before anything starts (through the supervisor and run directly as the supervised
coordinator), and --help shows the defaults. Needs no Ray: nothing here gets that far."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from coordinator import cli

RAYMPP = Path(sys.executable).parent / "raympp"
REPO = Path(__file__).resolve().parents[2]
TIMEOUT = 60


def parse_error(capsys, *argv) -> str:
    with pytest.raises(SystemExit) as e:
        cli.main(["serve", *argv])
    assert e.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (("--segments", "0"), "argument --segments: invalid number of segments: 0 (expected 1 to "
     f"{cli.MAX_SEGMENTS})"),
    (("--segments", "-3"), "invalid number of segments: -3"),
    (("--segments", "two"), "invalid number of segments: 'two' (expected an integer)"),
    (("--segments", "2.5"), "invalid number of segments: '2.5'"),
    (("--segments", str(cli.MAX_SEGMENTS + 1)), "invalid number of segments"),
    (("--port", "-1"), "argument --port: invalid port: -1 (expected 0 to 65535)"),
    (("--port", "65536"), "invalid port: 65536"),
    (("--port", "http"), "invalid port: 'http' (expected an integer)"),
    (("--log-level", "loud"), "argument --log-level: invalid log level: 'loud'"),
    (("--password", ""), "argument --password: must not be empty"),
    (("--host", ""), "argument --host: must not be empty"),
    (("--data-dir", " "), "argument --data-dir: must not be empty"),
    (("--bogus",), "unrecognized arguments: --bogus"),
])
def test_bad_arguments(capsys, argv, message):
    err = parse_error(capsys, *argv)
    assert message in err and "Traceback" not in err, err


def test_good_arguments_parse():
    import argparse

    parser = argparse.ArgumentParser()
    cli.add_serve_parser(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["serve", "--segments", "4", "--port", "0", "--log-level", "info",
                              "--password", "pw"])
    assert (args.segments, args.port, args.log_level, args.password) == (4, 0, "INFO", "pw")
    args = parser.parse_args(["serve"])
    assert (args.host, args.port, args.segments, args.data_dir, args.password,
            args.log_level) == ("127.0.0.1", 5433, 2, "./raympp-data", None, "WARNING")


def test_help_shows_defaults(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["serve", "--help"])
    assert e.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    for default in ("(default: 127.0.0.1)", "(default: 5433)", "(default: 2)",
                    "(default: ./raympp-data)", "(default: WARNING)",
                    "(default: no passwords", "(default: a private local Ray"):
        assert default in out, out


@pytest.fixture
def busy_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        yield s.getsockname()[1]


def run_serve(*argv, direct=False) -> subprocess.CompletedProcess:
    """`raympp serve ...` (the supervisor and its coordinator), or with `direct` the
    coordinator process as the supervisor starts it."""
    env = dict(os.environ, RAY_USAGE_STATS_ENABLED="0")
    if direct:
        cmd = [sys.executable, "-m", "coordinator.cli", "serve", *argv]
        env["RAYMPP_SUPERVISED"] = "1"
    else:
        cmd = [str(RAYMPP), "serve", *argv]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=TIMEOUT,
                          cwd=str(REPO))


@pytest.mark.parametrize("direct", [False, True], ids=["supervised", "direct"])
def test_port_in_use_is_one_line(busy_port, tmp_path, direct):
    data_dir = tmp_path / "data"
    done = run_serve("--port", str(busy_port), "--data-dir", str(data_dir), direct=direct)
    assert done.returncode == 1, done
    assert done.stderr.splitlines() == [
        f'raympp: could not bind IPv4 address "127.0.0.1": Address already in use (is '
        f"another server running on port {busy_port}?)"], done.stderr
    assert not data_dir.exists()  # nothing was started


@pytest.mark.parametrize("argv, line", [
    (("--host", "no-such-host.invalid"),
     'raympp: could not translate host name "no-such-host.invalid" to address: '),
    (("--host", "192.0.2.1"),  # TEST-NET-1: not an address of this host
     'raympp: could not bind IPv4 address "192.0.2.1": Cannot assign requested address'),
])
def test_address_that_cannot_be_listened_on(tmp_path, argv, line):
    done = run_serve(*argv, "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 1, done
    (only,) = done.stderr.splitlines()
    assert only.startswith(line), only


def test_data_dir_that_is_a_file(tmp_path):
    afile = tmp_path / "file"
    afile.write_text("")
    done = run_serve("--port", "0", "--data-dir", str(afile), direct=True)
    assert done.returncode == 1, done
    assert done.stderr.splitlines() == [f'raympp: data directory "{afile}" is not a directory']


def test_bad_segments_through_the_command(tmp_path):
    done = run_serve("--segments", "0", "--data-dir", str(tmp_path / "data"))
    assert done.returncode == 2
    assert "raympp serve: error: argument --segments: invalid number of segments: 0" in \
        done.stderr and "Traceback" not in done.stderr
