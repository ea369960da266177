#!/usr/bin/env python3
"""The Cockpit quarantine page in a real browser, through a real login.

Installs airlock (make install) into a private prefix whose page and sudo rule
name a private service user and root, creates a viewer and a reviewer (real
system users with passwords, in airlock-view and airlock-review), fills the
quarantine with hostile names, starts cockpit-ws on 127.0.0.1 and drives
headless Chromium through selenium: log in through PAM, see the overview,
filter the list, open an entry, be refused release as a viewer, release and
purge as a reviewer, and find the acting person in the journal. A trap for
alert(), window errors and CSP violations must stay empty. Screenshots of each
page at 1280x800 and 390x844 go to --screenshots. Everything it created (users,
groups, sudo rule, files, processes) is removed at the end. Needs root.
Exit status 0 only when every check passed.
"""
import argparse, json, os, re, secrets, shutil, socket, subprocess, sys, tempfile, time, traceback, zipfile

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TRAP = """
window.__trap = [];
window.alert = (m) => window.__trap.push('alert ' + m);
window.confirm = window.prompt = (m) => window.__trap.push('dialog ' + m);
window.addEventListener('error', (e) => window.__trap.push('error ' + e.message));
document.addEventListener('securitypolicyviolation', (e) => window.__trap.push('csp ' + e.violatedDirective + ' ' + e.blockedURI));
"""

# Drop names an attacker chooses (bytes: a file name may be anything but '/' and NUL).
HOSTILE_DROPS = [
    b"<img src=x onerror=alert(1)>.zip",
    b"javascript:alert(3)",
    "invoice\u202efdp.exe".encode(),
    b"bell\x07tab\tname\x1b[31m",
    b"A" * 251 + b".bin",
    b"\xff\xfe-not-utf8",
]
# Entry names inside a rejected archive, shown by the contents listing.
HOSTILE_ENTRIES = ['"><script>alert(2)</script>.txt', "<img src=x onerror=alert(4)>", "javascript:alert(5)", "rtl\u202etxt.exe"]


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def run(argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class World:
    """What the test creates, and its removal."""

    def __init__(self, build=None):
        self.build = build
        tag = secrets.token_hex(3)
        self.tmp = tempfile.mkdtemp(prefix="airlock-cockpit-", dir="/var/tmp")
        os.chmod(self.tmp, 0o755)
        self.service, self.viewer, self.reviewer = f"alsvc{tag}", f"alview{tag}", f"alrev{tag}"
        self.password = "pw-" + secrets.token_urlsafe(12)
        self.users, self.groups, self.files, self.processes = [], [], [], []
        self.prefix, self.root = f"{self.tmp}/prefix", f"{self.tmp}/root"
        self.sudoers = f"/etc/sudoers.d/airlock-test-{tag}"

    def group(self, name):
        if subprocess.run(["getent", "group", name], capture_output=True).returncode != 0:
            run(["groupadd", "--system", name])
            self.groups.append(name)

    def user(self, name, groups, login):
        home = f"{self.tmp}/home/{name}"
        argv = ["useradd", "--system", "--home-dir", home, "--shell", "/bin/bash" if login else "/usr/sbin/nologin"]
        if login:
            argv += ["--create-home", "--groups", ",".join(groups)]
        run(argv + [name])
        self.users.append(name)
        if login:
            run(["chpasswd"], input=f"{name}:{self.password}\n")

    def as_service(self, *args, check_status=True):
        result = subprocess.run(["runuser", "-u", self.service, "--", f"{self.prefix}/bin/airlock", *args],
                                capture_output=True, text=True)
        if check_status and result.returncode != 0:
            raise Failure(f"airlock {' '.join(args)}: {result.returncode}: {result.stderr}")
        return result

    def cleanup(self):
        for process in self.processes:
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(5)
                except subprocess.TimeoutExpired:
                    process.kill()
        for name in self.users:
            # The bridges cockpit-ws started for this test's sessions run as these users.
            uid = subprocess.run(["id", "-u", name], capture_output=True, text=True).stdout.strip()
            if uid:
                for pid in subprocess.run(["pgrep", "-u", uid], capture_output=True, text=True).stdout.split():
                    subprocess.run(["kill", pid], capture_output=True)
        time.sleep(0.5)
        for name in self.users:
            subprocess.run(["userdel", name], capture_output=True)
        for name in self.groups:
            subprocess.run(["groupdel", name], capture_output=True)
        for path in self.files:
            if os.path.exists(path):
                os.unlink(path)
        shutil.rmtree(self.tmp, ignore_errors=True)


def set_up(world):
    world.group("airlock-view")
    world.group("airlock-review")
    world.user(world.service, [], login=False)
    world.user(world.viewer, ["airlock-view"], login=True)
    world.user(world.reviewer, ["airlock-review"], login=True)
    build = world.build or (".build/release" if os.access(f"{REPO}/.build/release/airlock", os.X_OK) else ".build/debug")
    run(["make", "-s", "-C", REPO, "install", f"PREFIX={world.prefix}", f"BUILD={build}", f"SUDOERSDIR={world.tmp}/sudoers",
         f"AIRLOCK_USER={world.service}", f"AIRLOCK_ROOT={world.root}", "UNITDIR=" + world.tmp + "/units"])
    # The rule as make install wrote it, active for this test only.
    shutil.copyfile(f"{world.tmp}/sudoers/airlock", world.sudoers)
    world.files.append(world.sudoers)
    os.chmod(world.sudoers, 0o440)
    run(["visudo", "-cf", world.sudoers])
    for name in (world.viewer, world.reviewer):
        # Cockpit also loads packages from ~/.local/share/cockpit; the system directory stays untouched.
        target = f"{world.tmp}/home/{name}/.local/share/cockpit/airlock"
        shutil.copytree(f"{world.prefix}/share/cockpit/airlock", target)
        run(["chown", "-R", f"{name}:", f"{world.tmp}/home/{name}/.local"])
    os.mkdir(world.root)
    shutil.chown(world.root, world.service)
    world.as_service("init", "--root", world.root)
    fill_quarantine(world)


def write_zip(path, names):
    with zipfile.ZipFile(path, "w") as archive:
        for name in names:
            archive.writestr(name, b"hostile\n")


def fill_quarantine(world):
    inbox = f"{world.root}/inbox".encode()
    for name in HOSTILE_DROPS:
        with open(inbox + b"/" + name, "wb") as f:
            f.write(b"not an archive\n")
    write_zip(f"{world.root}/inbox/entries.zip", HOSTILE_ENTRIES + ["../outside.txt"])
    for n in range(3):
        write_zip(f"{world.root}/inbox/escape-{n}.zip", ["../outside.txt"])
    write_zip(f"{world.root}/inbox/collide.zip", ["Docs/a.txt", "docs/b.txt"])
    run(["chown", "-R", world.service, f"{world.root}/inbox"])
    world.as_service("run", "--once", "--root", world.root)
    listed = [line for line in world.as_service("quarantine", "list", "--json", "--root", world.root).stdout.split("\n") if line]
    check(len(listed) == len(HOSTILE_DROPS) + 5, f"expected {len(HOSTILE_DROPS) + 5} quarantine entries, got {len(listed)}")


def browser(size, dark=False):
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", f"--window-size={size[0]},{size[1]}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    if dark:
        driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-color-scheme", "value": "dark"}]})
    if size[0] < 500:
        # A headless window is never narrower than 500 px: a phone's viewport is emulated.
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": size[0], "height": size[1], "deviceScaleFactor": 2, "mobile": True})
    driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": TRAP})
    return driver


class Session:
    def __init__(self, world, port, user, size, shots, dark=False):
        self.world, self.base, self.user, self.shots = world, f"http://127.0.0.1:{port}", user, shots
        self.size, self.dark = size, dark
        self.driver = browser(size, dark)
        self.login()

    def login(self):
        d = self.driver
        d.get(self.base + "/")
        # The login page re-renders as it starts: elements found may go stale and are looked up again.
        wait = WebDriverWait(d, 60, ignored_exceptions=(StaleElementReferenceException, NoSuchElementException))
        wait.until(lambda d: d.find_elements(By.ID, "login-button") and d.find_element(By.ID, "login-button").is_displayed())
        d.find_element(By.ID, "login-user-input").send_keys(self.user)
        d.find_element(By.ID, "login-password-input").send_keys(self.world.password)
        d.find_element(By.ID, "login-button").click()
        # The login page gives way to the shell once PAM has accepted the password.
        wait.until(lambda d: (d.get_cookie("cockpit") or {}).get("value") not in (None, "", "deleted")
                   and not d.find_element(By.ID, "login").is_displayed() if d.find_elements(By.ID, "login") else True)

    def open(self, fragment, ready):
        d = self.driver
        url = f"{self.base}/cockpit/@localhost/airlock/index.html#{fragment}"
        if d.current_url.split("#")[0] == url.split("#")[0]:
            d.execute_script("location.hash = arguments[0]", fragment)
        else:
            d.get(url)
        try:
            WebDriverWait(d, 60).until(lambda d: d.execute_script("return document.body && document.body.dataset.ready") in (ready, "error"))
        except Exception:
            self.shot("failure-" + ready)
            logs = d.get_log("browser")
            raise Failure(f"{self.user}: page {fragment} never became ready: url {d.current_url}, text {d.find_element(By.TAG_NAME, 'body').text[:1500]!r}, console {logs}")
        state = d.execute_script("return document.body.dataset.ready")
        check(state == ready, f"{self.user}: page {fragment} did not load: {self.text('problem')}")
        self.quiet()

    def until(self, condition, what):
        try:
            WebDriverWait(self.driver, 60).until(condition)
        except Exception:
            self.shot("failure")
            raise Failure(f"{self.user}: {what} did not happen: problem {self.text('problem')!r}, outcome {self.text('action-outcome')!r}")

    def text(self, element_id):
        found = self.driver.find_elements(By.ID, element_id)
        return found[0].text if found else ""

    def quiet(self):
        trapped = self.driver.execute_script("return window.__trap || []")
        check(not trapped, f"a script ran or the policy was broken: {trapped}")
        # Nothing from a name became an element: the page makes no img, and only its own scripts.
        check(self.driver.execute_script("return document.querySelectorAll('img, iframe, object, embed').length") == 0, "a name became an element")
        scripts = self.driver.execute_script("return [...document.scripts].map(s => s.getAttribute('src'))")
        check(scripts == ["../base1/cockpit.js", "text.js", "chart.js", "airlock.js"], f"unexpected scripts: {scripts}")

    def shot(self, name):
        path = os.path.join(self.shots, f"{name}-{self.size[0]}x{self.size[1]}{'-dark' if self.dark else ''}.png")
        self.driver.save_screenshot(path)
        return path

    def airlock(self, *args):
        """Runs airlock from the page's own context, as the page does."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "window.airlockRun(arguments[0]).then(out => done({ok: true, out}), e => done({ok: false, message: e.message, status: e.status}));",
            list(args))

    def spawn(self, argv):
        """Runs argv through cockpit.spawn as the logged-in user, as a page could."""
        return self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "cockpit.spawn(arguments[0], {err: 'message'}).then(out => done({ok: true, out}), e => done({ok: false, message: e.message}));",
            argv)

    def close(self):
        self.driver.quit()


def entry_id(world, **filters):
    args = ["quarantine", "list", "--json", "--root", world.root]
    for key, value in filters.items():
        args += [f"--{key}", value]
    return json.loads(world.as_service(*args).stdout.splitlines()[0])["id"]


def viewer_checks(world, port, shots, written):
    s = Session(world, port, world.viewer, (1280, 800), shots)
    try:
        s.open("/overview", "overview")
        check("reviewer" not in s.text("who") and "viewer" in s.text("who"), f"viewer shown as {s.text('who')}")
        policy = s.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "fetch('index.html').then(r => done(r.headers.get('content-security-policy')), e => done('fetch failed: ' + e));")
        # Cockpit adds its own origin beside 'self'; nothing else may run scripts.
        scripts = re.search(r"(?:^|;)\s*script-src ([^;]*)", policy or "")
        check(scripts and set(scripts.group(1).split()) <= {"'self'", f"http://127.0.0.1:{s.base.rsplit(':', 1)[1]}"}
              and "unsafe" not in policy and "object-src 'none'" in policy, f"the page is not served under the manifest's policy: {policy}")
        body = s.driver.find_element(By.TAG_NAME, "body").text
        check("Outcomes per hour, last 24 hours" in body and "unsafe-path" in body, "the overview lacks its chart")
        # Keyboard: the first Tab stops are the page links, and Enter follows one.
        body_element = s.driver.find_element(By.TAG_NAME, "body")
        body_element.send_keys(Keys.TAB)
        check(s.driver.switch_to.active_element.get_attribute("id") == "nav-overview", "Tab does not reach the page links first")
        s.driver.switch_to.active_element.send_keys(Keys.TAB)
        check(s.driver.switch_to.active_element.get_attribute("id") == "nav-quarantine", "Tab does not go on to Quarantine")
        s.driver.switch_to.active_element.send_keys(Keys.ENTER)
        s.until(lambda d: d.execute_script("return document.body.dataset.ready") == "quarantine", "opening the list by keyboard")
        s.quiet()
        listing = s.driver.find_element(By.ID, "quarantine-table").text
        # Escaped as the terminal shows them: controls as \xHH, bidi controls as \u{...}, markup as text.
        for shown in ("<img src=x onerror=alert(1)>.zip", "javascript:alert(3)", "invoice\\u{202E}fdp.exe",
                      "bell\\x07tab\\x09name\\x1b[31m", "\\xff\\xfe-not-utf8", "A" * 251 + ".bin"):
            check(shown in listing, f"the list does not show {shown!r} escaped: {listing[:2000]}")
        check("\u202e" not in listing, "a right-to-left override reached the page unescaped")
        Select(s.driver.find_element(By.ID, "filter-reason")).select_by_value("unsafe-path")
        s.driver.find_element(By.ID, "filter-apply").click()
        WebDriverWait(s.driver, 30).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#quarantine-table tbody tr")) == 4)
        s.quiet()
        rows = s.driver.find_elements(By.CSS_SELECTOR, "#quarantine-table tbody tr")
        check(all("unsafe-path" in r.text for r in rows), "the reason filter let other reasons through")
        hostile = entry_id(world, text="entries.zip")
        s.open("/entry/" + hostile, "entry")
        WebDriverWait(s.driver, 60).until(lambda d: d.find_elements(By.ID, "contents-table"))
        contents = s.driver.find_element(By.ID, "contents-table").text
        for name in ('"><script>alert(2)</script>.txt', "<img src=x onerror=alert(4)>", "rtl\\u{202E}txt.exe"):
            check(name in contents, f"contents do not show {name!r} as escaped text: {contents}")
        s.quiet()
        check(not s.driver.find_element(By.ID, "release").is_enabled(), "release is offered to a viewer")
        refused = s.airlock("quarantine", "release", hostile, "--reason", "viewer tries")
        check(not refused["ok"] and refused["status"] == 77 and "may not release" in refused["message"], f"viewer release not refused: {refused}")
        # The sudo rule: only the review commands, only on the system root; no --config, no other --root, no run.
        command = [f"{world.prefix}/bin/airlock"]
        sudo = ["sudo", "-n", "-u", world.service, "--"]
        allowed = s.spawn(sudo + command + ["quarantine", "list", "--json", "--limit", "1", "--root", world.root])
        check(allowed["ok"], f"the rule refuses what the page runs: {allowed}")
        for argv in (["quarantine", "list", "--config", f"{world.root}/airlock.json", "--root", world.root],
                     ["quarantine", "list", "--root", world.tmp, "--root", world.root],
                     ["quarantine", "list", "--root=/tmp", "--root", world.root],
                     ["run", "--once", "--root", world.root],
                     ["quarantine", "list", "--root", world.tmp]):
            refused = s.spawn(sudo + command + argv)
            check(not refused["ok"] and "password is required" in refused["message"], f"the sudo rule let through {argv}: {refused}")
        check(world.as_service("quarantine", "show", hostile, "--json", "--root", world.root).stdout.find('"holds_drop":true') >= 0,
              "the viewer's refused release moved the drop")
        s.quiet()
    finally:
        s.close()


def reviewer_checks(world, port, shots, written):
    s = Session(world, port, world.reviewer, (1280, 800), shots)
    try:
        s.open("/overview", "overview")
        check("reviewer" in s.text("who"), f"reviewer shown as {s.text('who')}")
        released = entry_id(world, text="escape-0")
        s.open("/entry/" + released, "entry")
        s.driver.find_element(By.ID, "action-reason").send_keys("false positive, checked by hand")
        s.driver.find_element(By.ID, "release").click()
        s.until(lambda d: "gone (released)" in d.find_element(By.TAG_NAME, "body").text, "the release")
        s.quiet()
        purged = entry_id(world, text="escape-1")
        s.open("/entry/" + purged, "entry")
        s.driver.find_element(By.ID, "action-reason").send_keys("confirmed hostile")
        s.driver.find_element(By.ID, "purge").click()
        s.until(lambda d: d.execute_script("return location.hash") == "#/quarantine"
                and d.execute_script("return document.body.dataset.ready") == "quarantine", "the purge")
        s.quiet()
        journal = [json.loads(l) for l in world.as_service("history", "--json", "--root", world.root).stdout.splitlines()]
        rel = [r for r in journal if r["event"] == "released" and r["id"] == released]
        pur = [r for r in journal if r["event"] == "purged" and r["id"] == purged]
        check(len(rel) == 1 and rel[0].get("by") == world.reviewer and rel[0].get("release_reason") == "false positive, checked by hand",
              f"release record: {rel}")
        check(len(pur) == 1 and pur[0].get("by") == world.reviewer and pur[0].get("purge_reason") == "confirmed hostile", f"purge record: {pur}")
        # Several at once: select what a filter shows, give a reason, purge.
        s.open("/quarantine", "quarantine")
        s.driver.find_element(By.ID, "filter-text").send_keys("escape-")
        s.driver.find_element(By.ID, "filter-apply").click()
        s.until(lambda d: d.execute_script("return document.body.dataset.ready") == "quarantine"
                and len(d.find_elements(By.CSS_SELECTOR, "#quarantine-table tbody tr")) == 2, "filtering escape-")
        chosen = [r.get_attribute("data-id") for r in s.driver.find_elements(By.CSS_SELECTOR, "#quarantine-table tbody tr")]
        s.driver.find_element(By.ID, "select-all").click()
        check(s.text("selected-count") == "2 selected", f"selection: {s.text('selected-count')}")
        s.driver.find_element(By.ID, "bulk-reason").send_keys("bulk review")
        s.driver.find_element(By.ID, "bulk-purge").click()
        s.until(lambda d: d.execute_script("return document.body.dataset.ready") == "quarantine"
                and len(d.find_elements(By.CSS_SELECTOR, "#quarantine-table tbody tr")) == 0, "the bulk purge")
        journal = [json.loads(l) for l in world.as_service("history", "--json", "--root", world.root).stdout.splitlines()]
        bulk = [r for r in journal if r["event"] == "purged" and r["id"] in chosen]
        check(len(bulk) == 2 and all(r.get("by") == world.reviewer and r.get("purge_reason") == "bulk review" for r in bulk),
              f"bulk purge records: {bulk}")
        s.open("/history", "history")
        s.driver.find_element(By.ID, "history-text").send_keys(world.reviewer)
        shown = s.driver.find_element(By.CSS_SELECTOR, "table.history").text
        check(released in shown and purged in shown and "released" in shown and "purged" in shown, f"history page lacks the actions: {shown}")
        s.quiet()
    finally:
        s.close()


def screenshots(world, port, shots, written):
    target = entry_id(world, text="entries.zip")
    for size, dark in (((1280, 800), False), ((390, 844), False), ((1280, 800), True)):
        s = Session(world, port, world.reviewer, size, shots, dark)
        try:
            for fragment, ready, name in (("/overview", "overview", "overview"), ("/quarantine", "quarantine", "quarantine"),
                                          ("/entry/" + target, "entry", "entry"), ("/history", "history", "history")):
                s.open(fragment, ready)
                if ready == "entry":
                    WebDriverWait(s.driver, 60).until(lambda d: d.find_elements(By.ID, "contents-table"))
                written.append(s.shot(name))
                s.quiet()
                # The page fits the viewport: only tables scroll sideways, inside their own box.
                overflow = s.driver.execute_script("return document.documentElement.scrollWidth - window.innerWidth")
                check(overflow <= 0, f"{name} at {size[0]}x{size[1]} is {overflow} px wider than the viewport")
                if dark:
                    background = s.driver.execute_script("return getComputedStyle(document.body).backgroundColor")
                    check(background == "rgb(21, 21, 21)", f"dark mode not applied: {background}")
        finally:
            s.close()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--screenshots", default=os.path.join(REPO, ".build", "cockpit-screenshots"))
    parser.add_argument("--build", help="directory of the programs to install (default: .build/release if built, else .build/debug)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        print("review_test: needs root (it creates users, a sudo rule and starts cockpit-ws)", file=sys.stderr)
        return 77
    os.makedirs(args.screenshots, exist_ok=True)
    world, written, status = World(args.build), [], 1
    try:
        set_up(world)
        port = free_port()
        ws = subprocess.Popen(["/usr/lib/cockpit/cockpit-ws", "--no-tls", "--port", str(port), "--address", "127.0.0.1"],
                              stdout=subprocess.DEVNULL, stderr=open(f"{world.tmp}/cockpit-ws.log", "w"))
        world.processes.append(ws)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        for name, step in (("viewer", viewer_checks), ("reviewer", reviewer_checks), ("screenshots", screenshots)):
            step(world, port, args.screenshots, written)
            print(f"review_test: {name}: ok", flush=True)
        status = 0
    except Failure as failure:
        print(f"review_test: FAILED: {failure}", file=sys.stderr)
    except Exception:
        traceback.print_exc()
        print("review_test: FAILED with an error", file=sys.stderr)
    finally:
        log = f"{world.tmp}/cockpit-ws.log"
        if status and os.path.exists(log):
            sys.stderr.write(open(log).read()[-3000:])
        world.cleanup()
    for path in written:
        print(f"review_test: screenshot {path}")
    print("review_test: " + ("passed" if status == 0 else "FAILED"))
    return status


if __name__ == "__main__":
    sys.exit(main())
