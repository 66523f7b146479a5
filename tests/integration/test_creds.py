"""The credentials file through the real binary: `spoolbox --check` validates it (format,
mode, owner, symlinks, token files), reporting file:line: reason and never a secret."""
import os


def write(path, text, mode=0o600):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, mode)


def check(box):
    path = box.write_conf("")
    return box.run(None, "--check", "-C", path)


def test_missing_credentials_file_is_fine(box):
    p = check(box)
    assert p.returncode == 0, p.stderr
    assert b"configuration is valid" in p.stdout


def test_valid_file_with_token(box):
    creds = box.env["CREDENTIALS"]
    token = os.path.join(box.etc, "gmail.token")
    write(token, "ya29.a0AfH6SMBx\n")
    write(creds, '# relays\nrelay.example:587 alice "pass word"\n'
                 f"smtp.gmail.com me@gmail.com xoauth2 {token}\n* fallback fb\n")
    p = check(box)
    assert p.returncode == 0, p.stderr


def test_errors_have_locations_and_no_secrets(box):
    creds = box.env["CREDENTIALS"]
    write(creds, "ok.example u TOPSECRET1\nbad.example u TOPSECRET2 extra\n"
                 'q.example u "TOPSECRET3\n'
                 "t.example u xoauth2 relative.token\n")
    p = check(box)
    assert p.returncode == 78
    err = p.stderr.decode()
    assert f"{creds}:2: error: 4 fields: expected HOST USER PASSWORD" in err
    assert f"{creds}:3: error: unterminated quoted field" in err
    assert f"{creds}:4: error: the token file must be an absolute path" in err
    assert "TOPSECRET" not in err


def test_mode_symlink_and_missing_token(box):
    creds = box.env["CREDENTIALS"]
    write(creds, "relay.example u p\n", 0o644)
    p = check(box)
    assert p.returncode == 78
    assert f"{creds}: error: mode 0644 lets others read it (refused: chmod 600)" in p.stderr.decode()

    real = os.path.join(box.etc, "real-credentials")
    write(real, "relay.example u p\n")
    os.remove(creds)
    os.symlink(real, creds)
    p = check(box)
    assert p.returncode == 78
    assert b"is a symbolic link" in p.stderr

    os.remove(creds)
    write(creds, f"relay.example u xoauth2 {box.etc}/none.token\n")
    p = check(box)
    assert p.returncode == 78
    assert f"{creds}:1: error: token file {box.etc}/none.token cannot open: No such file or directory" \
        in p.stderr.decode()
