"""Lite2-style log lines ("E message", "W message", ...) on stdout and, when
verbose, in the verbose file too."""
import sys

from .paths import is_path


class LiteLog:
    def __init__(self, verbose=False, verbose_file=None):
        try:
            self.verbose = bool(verbose)
        except (TypeError, ValueError):  # an array, say
            self.verbose = False
        self._file = None
        if self.verbose and verbose_file is not None:
            if not is_path(verbose_file):
                self.w("verbose_file %r is not a path; debug lines go to the screen only" % (verbose_file,))
                return
            try:
                self._file = open(verbose_file, "a", encoding="utf-8")
            except OSError as e:
                self.w("cannot open the verbose file %s (%s): debug lines go to the screen only"
                       % (verbose_file, e.strerror))

    def _emit(self, severity, message):
        line = "%s %s" % (severity, message)
        print(line, file=sys.stdout, flush=True)
        if self._file is not None:
            self._file.write(line + "\n")
            self._file.flush()

    def e(self, message):
        self._emit("E", message)

    def w(self, message):
        self._emit("W", message)

    def i(self, message):
        self._emit("I", message)

    def d(self, message):
        if self.verbose:
            self._emit("D", message)

    def close(self):
        if self._file is not None:
            self._file.close()
            self._file = None
