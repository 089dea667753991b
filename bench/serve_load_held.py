# SPDX-License-Identifier: GPL-2.0-or-later
#
# The connections bench/serve-load holds open beside its scrapes, in a
# process of their own (so that their work does not delay the scraper's
# clock): IDLE that connect and send nothing, and SLOW that send
# GET /metrics and then read 16 bytes a second through a receive buffer
# of 1 KB. Whenever the server closes one (its idle timeout, the end of an
# answer, a connection over its limit), it is opened again 100 ms later.
# (serve answers with Connection: close; an answer that fits in the
# kernel's socket buffers has left serve at once, and its slow reader then
# holds the kernel's memory, not serve's.)
# One thread, one selector. What it saw, when asked, comes back as a dict:
#   connects, failed (connect refused or timed out), closed (by the
#   server), reset (ECONNRESET), answers (slow readers that read an answer
#   to its end), slow_bytes, open_min/open_mean (connections open, sampled
#   each second once all were first open), first_open_s.
import selectors
import socket
import time

READ_BYTES = 16
READ_EVERY = 1.0
RCVBUF = 1024
REOPEN_AFTER = 0.1
CONNECT_WITHIN = 2.0
REQUEST = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


class Held:
    def __init__(self, port, idle, slow):
        self.port = port
        self.selector = selectors.DefaultSelector()
        self.kinds = ["idle"] * idle + ["slow"] * slow
        self.socks = [None] * len(self.kinds)
        self.reopen_at = [0.0] * len(self.kinds)
        self.got = [b""] * len(self.kinds)
        self.pending = [None] * len(self.kinds)  # connecting: until when
        self.stats = dict(connects=0, failed=0, closed=0, reset=0, answers=0, slow_bytes=0)

    def open(self, i):
        """Starts connecting; `connected` ends it."""
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self.kinds[i] == "slow":
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RCVBUF)
        s.setblocking(False)
        s.connect_ex(("127.0.0.1", self.port))
        self.socks[i] = s
        self.pending[i] = time.monotonic() + CONNECT_WITHIN
        self.got[i] = b""
        self.selector.register(s, selectors.EVENT_WRITE, i)

    def connected(self, i):
        s = self.socks[i]
        self.selector.unregister(s)
        self.pending[i] = None
        error = s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR)
        if error == 0 and self.kinds[i] == "slow":
            try:
                s.send(REQUEST)  # far less than the send buffer
            except OSError:
                error = 1
        if error != 0:
            return self.give_up(i)
        self.stats["connects"] += 1
        if self.kinds[i] == "idle":
            self.selector.register(s, selectors.EVENT_READ, i)

    def give_up(self, i):
        if self.pending[i] is not None:
            self.selector.unregister(self.socks[i])
            self.pending[i] = None
        self.socks[i].close()
        self.socks[i] = None
        self.stats["failed"] += 1
        self.reopen_at[i] = time.monotonic() + REOPEN_AFTER

    def lost(self, i, reset):
        s = self.socks[i]
        if self.kinds[i] == "idle":
            self.selector.unregister(s)
        s.close()
        self.socks[i] = None
        self.stats["reset" if reset else "closed"] += 1
        self.reopen_at[i] = time.monotonic() + REOPEN_AFTER

    # An idle connection readable: the server spoke or closed it.
    def read_idle(self, i):
        try:
            data = self.socks[i].recv(4096)
        except ConnectionResetError:
            return self.lost(i, True)
        except BlockingIOError:
            return
        if not data:
            self.lost(i, False)

    def read_slow(self, i):
        try:
            data = self.socks[i].recv(READ_BYTES)
        except BlockingIOError:
            return
        except ConnectionResetError:
            return self.lost(i, True)
        if not data:
            if b"\r\n\r\n" in self.got[i]:
                self.stats["answers"] += 1
            return self.lost(i, False)
        self.stats["slow_bytes"] += len(data)
        self.got[i] = (self.got[i] + data)[-64:] if len(self.got[i]) > 4096 else self.got[i] + data

    def open_count(self):
        return sum(s is not None and p is None for s, p in zip(self.socks, self.pending))

    def figures(self, samples, first_open):
        return dict(self.stats, open_min=min(samples, default=0), first_open_s=first_open,
                    open_mean=sum(samples) / len(samples) if samples else 0)

    def run(self, snapshot, stop, opened, results):
        """Until the `stop` event is set; `opened` (a shared value) gets the
        number of connections open, each second; once `snapshot` is set,
        the figures so far go to `results` (a pipe)."""
        samples = []
        started = time.monotonic()
        first_open = None
        next_read = next_sample = started
        while not stop.is_set():
            now = time.monotonic()
            if snapshot.is_set() and results is not None:
                results.send(self.figures(samples, first_open))
                results.close()
                results = None
            for i, s in enumerate(self.socks):
                if s is None and now >= self.reopen_at[i]:
                    self.open(i)
                elif self.pending[i] is not None and now >= self.pending[i]:
                    self.give_up(i)
            if first_open is None and self.open_count() == len(self.socks):
                first_open = now - started
            if now >= next_read:
                for i, s in enumerate(self.socks):
                    if s is not None and self.pending[i] is None and self.kinds[i] == "slow":
                        self.read_slow(i)
                next_read = now + READ_EVERY
            if now >= next_sample:
                opened.value = self.open_count()
                if first_open is not None:
                    samples.append(opened.value)
                next_sample = now + 1.0
            for key, _ in self.selector.select(timeout=REOPEN_AFTER / 2):
                i = key.data
                if self.pending[i] is not None:
                    self.connected(i)
                elif self.socks[i] is not None:
                    self.read_idle(i)
        for s in self.socks:
            if s is not None:
                s.close()


def hold(port, idle, slow, snapshot, stop, opened, results):
    """The process's body: holds the connections until `stop`; the figures
    go through the `results` pipe once `snapshot` is set."""
    Held(port, idle, slow).run(snapshot, stop, opened, results)
