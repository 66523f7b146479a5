"""The manual pages: spoolbox.conf(5) is generated from the key table (scripts/gen-conf-man.py)
and must match it, spoolbox(8) must name every applet and option the binary has, and both must
format without a warning."""
import os
import re
import subprocess
import sys

import pytest

from conftest import BINARY, ROOT

MAN = os.path.join(ROOT, "docs", "man")
sys.path.insert(0, os.path.join(ROOT, "scripts"))


def generated():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_conf_man", os.path.join(ROOT, "scripts", "gen-conf-man.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_conf_page_is_the_generated_one():
    page = open(os.path.join(MAN, "spoolbox.conf.5")).read()
    assert page == generated().page(), \
        "docs/man/spoolbox.conf.5 differs from the key table: run python3 scripts/gen-conf-man.py > docs/man/spoolbox.conf.5"


def test_conf_page_lists_every_key_with_type_and_default():
    table = open(os.path.join(ROOT, "lib", "conf_keys.h")).read()
    keys = re.findall(r"^CONF\((\w+), (\w+), (\"[^\"]*\"|\w+),", table, re.M)
    assert len(keys) > 30
    text = subprocess.run(["groff", "-man", "-Tutf8", "-P-cbou", "-rLL=300n", "-rHY=0", os.path.join(MAN, "spoolbox.conf.5")],
                          capture_output=True, text=True, check=True).stdout
    names = {"CT_STR": "string", "CT_PATH": "absolute path", "CT_BOOL": "yes/no", "CT_INT": "number",
             "CT_SIZE": "size", "CT_INTERVAL": "interval", "CT_LIST": "list"}
    for name, typ, dflt in keys:
        dflt = "/var/spool/spoolbox" if dflt == "DEFAULT_SPOOL" else dflt.strip('"')
        want = f"{name} ({names[typ]}, default {dflt or 'empty'})"
        assert want in text, want


def test_generator_refuses_a_type_it_cannot_name(tmp_path, monkeypatch):
    mod = generated()
    fake = tmp_path / "lib"
    fake.mkdir()
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config_default.h").write_text("")
    (fake / "conf_keys.h").write_text('/* --- x --- */\nCONF(NEW, CT_COLOUR, "red", "a colour")\n')
    monkeypatch.setattr(mod, "ROOT", str(tmp_path))
    with pytest.raises(SystemExit) as e:
        mod.keys()
    assert "type CT_COLOUR has no name" in str(e.value)


def test_spoolbox_page_names_every_applet_link_and_option():
    page = open(os.path.join(MAN, "spoolbox.8")).read()
    applets_section = page.split(".SH APPLETS", 1)[1].split(".SH ", 1)[0]
    listed = set(re.findall(r"^\.BR (\w+)(?: \", \" (\w+))?", applets_section, re.M))
    names = {n for pair in listed for n in pair if n}
    out = subprocess.run([BINARY, "--list"], capture_output=True, text=True, check=True).stdout
    want = {ln.split(" -> ")[0] for ln in out.splitlines() if ln}
    assert names == want
    # each with the directory applets/applets.h installs it in
    for m in re.finditer(r'^(?:APPLET\((\w+), "([^"]+)"|LINK\((\w+), \w+, "([^"]+)")', open(
            os.path.join(ROOT, "applets", "applets.h")).read(), re.M):
        name, d = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        entry = re.search(r"^\.BR [^\n]*\b%s\b[^\n]*\n" % name, applets_section, re.M).group(0)
        assert d in entry, (name, d, entry)
    usage = subprocess.run([BINARY, "--help"], capture_output=True, text=True).stdout
    for opt in sorted(set(re.findall(r"--[a-z]+", usage))):
        assert "\\-\\-" + opt[2:] in page, opt


@pytest.mark.parametrize("page", ["spoolbox.8", "spoolbox.conf.5"])
def test_page_formats_without_warnings(page):
    p = subprocess.run(["groff", "-man", "-ww", "-z", "-t", os.path.join(MAN, page)], capture_output=True, text=True)
    assert p.returncode == 0 and p.stderr == "", p.stderr
