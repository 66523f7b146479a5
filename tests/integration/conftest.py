"""Shared pytest fixtures: the binary under test, a private spool and configuration per test,
running applets with a timeout, and an aiosmtpd SMTP server on 127.0.0.1 that records what it
receives. The binary comes from $SPOOLBOX (make test sets it to each build variant)."""
import os
import re
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from smtpsink import SmtpSink  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BINARY = os.environ.get("SPOOLBOX") or os.path.join(ROOT, "spoolbox")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: long-running (run against the product build only)")
    config.addinivalue_line("markers", "root: needs root (tmpfs, other users)")
    config.addinivalue_line("markers", "tls: needs a TLS build")
    config.addinivalue_line("markers", "needs(option, ...): build options (spoolbox --version) the test needs")


def binary_features():
    """The build options of the binary under test, from `spoolbox --version`: its "options:"
    line ("+tls -smtpd ..."), as {name: bool}."""
    out = subprocess.run([BINARY, "--version"], capture_output=True, text=True).stdout
    feats = {"tls": "tls=bearssl" in out}
    for line in out.splitlines():
        if line.startswith("options:"):
            feats.update({w[1:]: w[0] == "+" for w in line.split()[1:]})
    return feats


# Every spoolbox.conf key: a value the developer's shell happens to export never reaches a test.
with open(os.path.join(ROOT, "lib", "conf_keys.h")) as _f:
    CONF_KEYS = frozenset(re.findall(r"^CONF\((\w+),", _f.read(), re.M))



FEATURES = binary_features() if os.path.exists(BINARY) else {}
HAVE_TLS = FEATURES.get("tls", False)

# Whole test files about one optional subsystem (config/config_default.h); a single test
# elsewhere says what it needs with @pytest.mark.needs("option").
FILE_NEEDS = {
    "test_errormail.py": ("local",),  # the reports are delivered to a local sender
    "test_errormail_notices.py": ("local",),
    "test_crash_points.py": ("local",),  # every crash is followed by delivery into an mbox
    "test_power_cut.py": ("local",),
    "test_local.py": ("local",),
    "test_local_e2e.py": ("local",),
    "test_local_reliability.py": ("local",),
    "test_mailq_socket.py": ("mailq_proto",),
    "test_security_local.py": ("local",),
    "test_submit_bs.py": ("smtpd",),
}
# Single tests of other subjects that lean on an optional subsystem: "file::test[param]", or
# "file::test" for every parameter.
TEST_NEEDS = {
    "test_hermetic.py::test_scheduler_C_reaches_its_agents": ("local",),
    "test_sched_reload.py::test_no_etc_passwd_agents_still_run_as_root": ("local",),
    "test_smtp_dead_destination.py::test_a_mute_relay_costs_one_timeout_for_all_its_messages": ("mailq_proto",),
    "test_install.py::test_install_as_root_makes_dirs_group_setgid_and_spool": ("local",),
    "test_install.py::test_scheduler_first_then_nobody_submits_and_it_is_delivered": ("local",),
    "test_install.py::test_check_reports_a_spool_without_the_group_and_the_scheduler_repairs_it": ("local",),
    "test_manpages.py::test_spoolbox_page_names_every_applet_link_and_option": ("local",),
    "test_packaging.py::test_install_puts_binary_links_manpages_and_config_into_destdir": ("local",),
    "test_packaging.py::test_procd_script_starts_and_stops_a_scheduler_that_delivers": ("local",),
    "test_packaging.py::test_procd_script_makes_the_directories_above_spool_and_mailboxes": ("local",),
    "test_packaging.py::test_openrc_script_starts_reloads_flushes_and_stops_a_scheduler": ("local",),
    "test_packaging.py::test_run_script_under_its_supervisor_delivers_and_stops": ("local",),
    "test_packaging.py::test_buildroot_init_script_starts_and_stops_a_scheduler": ("local",),
    "test_spool_minfree.py::test_submit_keeps_the_reserve_and_the_queue_still_drains": ("local",),
    "test_submit.py::test_a_configuration_mistake_never_refuses_mail": ("local",),
    "test_submit.py::test_other_sendmails_options_are_accepted_and_logged": ("local",),
    "test_submit.py::test_busybox_invocation_as_one_line": ("local",),
    "test_submit.py::test_msmtp_long_forms_that_mean_something": ("local",),
    "test_dispatch.py::test_list_names_every_applet_and_link": ("local",),
    "test_dispatch.py::test_install_creates_symlinks": ("local",),
    "test_dispatch.py::test_every_applet_has_help_by_argument_and_by_name": ("verbose_usage",),
    "test_dispatch.py::test_unknown_applet_is_usage_error": ("verbose_usage",),
    "test_dispatch.py::test_spoolbox_help_mentions_install_locations": ("verbose_usage",),
    "test_logging.py::test_agents_log_to_their_stderr_without_syslog[local]": ("local",),
    "test_logging.py::test_ps_shows_an_agent[local]": ("local",),
    "test_scheduler.py::test_end_to_end_submit_trigger_local": ("local",),
    "test_security_submit.py::test_bs_mail_from_and_rcpt_with_an_escaped_cr_are_refused": ("smtpd",),
    "test_smtp_tls.py::test_client_certificate": ("tls_client_cert",),
    "test_submit.py::test_dsn_flags": ("dsn",),
    "test_smtp.py::test_dsn_parameters_passed_on": ("dsn",),
    "test_smtp.py::test_auth_cram_md5_is_preferred_in_clear_text[True]": ("cram_md5",),
    "test_smtp.py::test_auth_cram_md5_is_preferred_in_clear_text[False]": ("cram_md5",),
    "test_smtp_hostile.py::test_cram_md5_is_allowed_to_an_unverified_peer": ("cram_md5",),
    "test_submit.py::test_recipients_are_routed[arguments]": ("local",),
    "test_submit.py::test_bm_is_the_default_mode": ("local",),
    "test_submit.py::test_bv_shows_routes_and_queues_nothing": ("local",),
    "test_submit.py::test_compatibility_options_are_accepted": ("local",),
    "test_submit.py::test_cron": ("local",),
    "test_submit.py::test_mailx_user": ("local",),
    "test_submit.py::test_sudo": ("local",),
    "test_submit.py::test_bi_runs_newaliases_and_passes_its_exit_code": ("local",),
    "test_submit.py::test_submit_never_resolves_names": ("smtpd",),
    "test_submit_headers.py::test_bare_addresses_are_qualified_in_envelope_and_address_fields": ("local",),
    "test_submit_headers.py::test_localdomains_setting": ("local",),
    "test_submit_headers.py::test_8bit_display_names_do_not_break_t": ("local",),
    "test_submit_perm.py::test_nobody_submits_through_the_setgid_binary": ("local",),
}


def pytest_collection_modifyitems(config, items):
    for item in items:
        base = os.path.basename(str(item.fspath))
        needs = list(FILE_NEEDS.get(base, ())) + list(TEST_NEEDS.get(base + "::" + item.name, ()))
        if getattr(item, "originalname", item.name) != item.name:
            needs += TEST_NEEDS.get(base + "::" + item.originalname, ())
        for m in item.iter_markers("needs"):
            needs.extend(m.args)
        missing = [n for n in needs if not FEATURES.get(n, True)]
        if missing:
            item.add_marker(pytest.mark.skip(reason="built without " + ", ".join(missing)))
IS_ASAN = "gcc-asan" in BINARY


class Box:
    """One private spoolbox installation: spool, configuration and mail directories under a
    temporary directory. Every applet run gets the keys below through the environment, and
    SPOOLBOX_CONF names the box's own spoolbox.conf (empty until a test writes it), so that no
    run reads the system's /etc/spoolbox (tests/hermetic.sh proves it)."""

    def __init__(self, base):
        self.base = str(base)
        self.spool = os.path.join(self.base, "spool")
        self.etc = os.path.join(self.base, "etc")
        self.mail = os.path.join(self.base, "mail")
        for d in (self.etc, self.mail):
            os.makedirs(d, exist_ok=True)
        self.conf_path = os.path.join(self.etc, "spoolbox.conf")
        with open(self.conf_path, "w") as f:
            f.write("# this test's spoolbox.conf\n")
        self.env = {
            "SPOOLBOX_CONF": self.conf_path,
            "SPOOL": self.spool,
            "MYHOSTNAME": "box.example",
            "LOG": "stderr",
            "SCHEDULER_CONF": os.path.join(self.etc, "scheduler.conf"),
            "ALIASES": os.path.join(self.etc, "aliases"),
            "MBOX_DIR": self.mail,
            "CREDENTIALS": os.path.join(self.etc, "credentials"),
            # the agents run as root here, as the scheduler does: a box's directories are
            # root's, and a machine with an installed spoolbox has a real AGENT_USER that must
            # not reach them (test_privilege.py sets its own)
            "AGENT_USER": "root",
        }

    def environ(self, extra=None):
        env = {k: v for k, v in os.environ.items()
               if k not in self.env and k not in CONF_KEYS and not k.startswith("SPOOLBOX")}
        env.update(self.env)
        if extra:
            env.update(extra)
        return env

    def run(self, applet, *args, input=None, timeout=20, env=None, argv0=None, check=False, **kw):
        """Runs `spoolbox APPLET ARGS` (or the binary under the name argv0) and returns the
        CompletedProcess with bytes stdout/stderr."""
        if isinstance(input, str):
            input = input.encode()
        if argv0:
            cmd = [argv0] + list(args)
            executable = BINARY
        else:
            cmd = [BINARY, applet] + list(args) if applet else [BINARY] + list(args)
            executable = None
        p = subprocess.run(cmd, input=input, capture_output=True, timeout=timeout,
                           env=self.environ(env), executable=executable, **kw)
        if check and p.returncode != 0:
            raise AssertionError(f"{cmd} exited {p.returncode}: {p.stderr.decode(errors='replace')}")
        return p

    def scheduler_once(self, env=None, *args, timeout=60):
        """`scheduler -1 -i`: runs what is due until nothing is and no agent runs; asserts that
        it exits 0 and returns the CompletedProcess (its log in stderr)."""
        p = subprocess.run([BINARY, "scheduler", "-1", "-i"] + list(args), env=self.environ(env),
                           capture_output=True, timeout=timeout)
        assert p.returncode == 0, p.stderr.decode(errors="replace")
        return p

    def write_conf(self, text):
        with open(self.conf_path, "w") as f:
            f.write(text)
        return self.conf_path


@pytest.fixture
def box(tmp_path):
    return Box(tmp_path)


@pytest.fixture
def binary():
    return BINARY


@pytest.fixture
def setgid_install():
    """(binary, spool, confdir, gid) of setgidlib.setgid_install(): a setgid copy of the binary,
    a spool with the modes of docs/spool.md 8, a spoolbox.conf for /etc/spoolbox."""
    import setgidlib  # it imports this module
    with setgidlib.setgid_install() as inst:
        yield inst


@pytest.fixture
def smtp_sink():
    """An accepting SMTP server on 127.0.0.1; .messages holds what it received."""
    sink = SmtpSink()
    sink.start()
    yield sink
    sink.stop()


@pytest.fixture
def sink(smtp_sink):
    """smtp_sink under the short name most tests use."""
    return smtp_sink


def wait_for(pred, timeout=30, interval=0.02):
    """Polls pred until it is true or timeout seconds passed; returns its last value (a test
    asserts on it, so a slow machine only waits longer)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if pred():
            return True
        time.sleep(interval)
    return pred()
