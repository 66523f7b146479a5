

def test_end_to_end_submit_trigger_local(box):
    """The real chain with the built-in configuration: submit pulls the trigger of a running
    scheduler, which runs our local transport into an mbox."""
    user = os.environ.get("USER") or "root"
    with open(box.env["ALIASES"], "w") as f:
        f.write("")
    proc = start_daemon(box)
    try:
        p = box.run("submit", "-i", user, input="Subject: e2e\n\nhello from the test\n")
        if p.returncode == 69:
            pytest.skip("submit not in this build")
        assert p.returncode == 0, p.stderr
        mbox = os.path.join(box.mail, user)
        deadline = time.time() + 10
        while time.time() < deadline and not (os.path.exists(mbox) and b"hello from the test" in open(mbox, "rb").read()):
            time.sleep(0.05)
        assert b"hello from the test" in open(mbox, "rb").read()
        deadline = time.time() + 5
        while time.time() < deadline and gen_left(box):
            time.sleep(0.05)
        assert gen_left(box) == 0
    finally:
        rc, err = stop(box, proc)
    assert rc == 0, err
