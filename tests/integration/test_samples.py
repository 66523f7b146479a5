"""The sample configuration shipped in config/ must always pass `spoolbox --check`."""
import os
import shutil

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_samples_pass_check(box):
    etc = box.etc
    shutil.copy(os.path.join(ROOT, "config", "aliases.sample"), os.path.join(etc, "aliases"))
    creds = os.path.join(etc, "credentials")
    shutil.copy(os.path.join(ROOT, "config", "credentials.sample"), creds)
    os.chmod(creds, 0o600)
    if os.path.exists(os.path.join(ROOT, "config", "scheduler.conf.sample")):
        shutil.copy(os.path.join(ROOT, "config", "scheduler.conf.sample"), os.path.join(etc, "scheduler.conf"))
    p = box.run(None, "--check", "-C", os.path.join(ROOT, "config", "spoolbox.conf.sample"))
    assert p.returncode == 0, p.stderr.decode()
    assert b"configuration is valid" in p.stdout


def test_scheduler_sample_is_the_builtin_configuration():
    """The sample documents the built-in clauses: it must not drift from them."""
    import re
    sample = open(os.path.join(ROOT, "config", "scheduler.conf.sample")).read()
    src = open(os.path.join(ROOT, "lib", "schedconf.c")).read()
    builtin = "".join(re.findall(r'^\s*"((?:[^"\\]|\\.)*)"', src.split("schedconf_builtin[] =", 1)[1].split(";", 1)[0], re.M))
    builtin = builtin.encode().decode("unicode_escape")
    active = lambda text: [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
    assert active(sample) == active(builtin)
