"""The baseline of bench/capture.py: the logging proxy server authors write by hand today, put in a
host's config in place of the server. Three threads (stdin -> server, server stdout -> host,
server stderr -> host), each line forwarded and written to a log file (buffered, not flushed a
line: the cheapest such proxy).

    python plain_proxy.py LOG_FILE -- COMMAND [ARG ...]
"""

from __future__ import annotations

import subprocess
import sys
import threading


def main() -> int:
    log_path, command = sys.argv[1], sys.argv[3:]
    log = open(log_path, "ab")
    lock = threading.Lock()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdin and proc.stdout and proc.stderr

    def pump(source, target, tag: bytes, close_target: bool) -> None:
        for line in iter(source.readline, b""):
            target.write(line)
            target.flush()
            with lock:
                log.write(tag + line)
        if close_target:
            target.close()

    threads = [
        threading.Thread(target=pump, args=(sys.stdin.buffer, proc.stdin, b"> ", True), daemon=True),
        threading.Thread(target=pump, args=(proc.stdout, sys.stdout.buffer, b"< ", False), daemon=True),
        threading.Thread(target=pump, args=(proc.stderr, sys.stderr.buffer, b"! ", False), daemon=True),
    ]
    for thread in threads:
        thread.start()
    code = proc.wait()
    threads[1].join()
    threads[2].join()
    with lock:
        log.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
