"""Benign lines: ordinary prose, code and config that hold no secret. Fixed seed."""
import base64, hashlib, json, random, string, sys, uuid, zlib
R = random.Random(7)
A = string.ascii_letters + string.digits
def tok(n, al=A): return "".join(R.choice(al) for _ in range(n))
lines = []
def add(kind, *texts):
    for t in texts:
        lines.append({"kind": kind, "text": t})
for i in range(40):
    data = bytes(R.randrange(256) for _ in range(64))
    sha = hashlib.sha256(data).hexdigest(); sha1 = hashlib.sha1(data).hexdigest(); md5 = hashlib.md5(data).hexdigest()
    u = str(uuid.UUID(int=R.getrandbits(128), version=4))
    add("hash", f"sha256sum: {sha}  memhost-0.4.tar.gz", f"commit {sha1}", f"Merge: {sha1[:7]} {hashlib.sha1(sha.encode()).hexdigest()[:7]}",
        f"{md5}  README.md", f"image: ghcr.io/acme/api@sha256:{sha}",
        f'"integrity": "sha512-{base64.b64encode(hashlib.sha512(data).digest()).decode()}",',
        f"fixed in {sha1[:12]} (\"Keep the lock across the rename\")", f"ETag: \"{md5}\"",
        f'git checkout {sha1}', f"hash = {sha[:16]}...")
    add("uuid", f"request_id={u} status=200 duration_ms={R.randrange(900)}", f'{{"id": "{u}", "kind": "note"}}',
        f"session {u} rotated (reason=compress)", f"Trace-Id: {u.replace('-', '')}")
    img = base64.b64encode(b"\x89PNG\r\n\x1a\n" + zlib.compress(bytes(R.randrange(256) for _ in range(R.randrange(40, 200))))).decode()
    add("base64", f'<img src="data:image/png;base64,{img}" alt="logo">', f"background: url(data:image/png;base64,{img});",
        f"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAI{tok(43, A + '+/')} alice@laptop",
        f"ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABgQ{tok(200, A + '+/')}= bob@build",
        f"  {base64.b64encode(bytes(R.randrange(256) for _ in range(48))).decode()}")
    add("url", R.choice([f"https://github.com/acme/{tok(6).lower()}/pull/{R.randrange(9999)}",
                         f"see https://docs.python.org/3/library/{R.choice(['os', 're', 'json', 'sqlite3'])}.html#{tok(5).lower()}",
                         f"git@github.com:acme/{tok(5).lower()}.git", f"ssh://git@gitlab.example.com:2222/team/{tok(4).lower()}.git",
                         "https://alice@bitbucket.org/acme/repo.git", f"postgres://localhost:5432/{tok(4).lower()}",
                         "redis://cache.internal:6379/0", f"https://example.com/search?q={tok(6)}&page=2&sort=desc",
                         "http://127.0.0.1:8765/settings?tab=recall", f"https://s3.amazonaws.com/acme-assets/{tok(12)}/logo.png",
                         f"mailto:support@example.com?subject=Order%20{R.randrange(99999)}",
                         f"https://www.youtube.com/watch?v={tok(11)}", f"https://pypi.org/project/memhost/0.{R.randrange(9)}.{R.randrange(9)}/",
                         f"file:///home/alice/projects/{tok(5).lower()}/notes.md"]))
for i in range(200):
    add("ident", R.choice([f"{tok(3).lower()}_{R.choice(['token', 'key', 'secret', 'password'])}_count = {R.randrange(99)}",
                           f"v{R.randrange(9)}.{R.randrange(30)}.{R.randrange(99)}-rc{R.randrange(5)}",
                           f"2026-{R.randrange(1,12):02d}-{R.randrange(1,28):02d}T{R.randrange(24):02d}:{R.randrange(60):02d}:{R.randrange(60):02d}.{R.randrange(999999):06d}Z INFO memhost.worker: drained {R.randrange(40)} tasks",
                           f"color: #{tok(6, '0123456789abcdef')};", f"/usr/lib/python3/dist-packages/{tok(8).lower()}/__init__.py",
                           f"IPv6 fe80::{tok(4, '0123456789abcdef')}:{tok(4, '0123456789abcdef')}:{tok(4, '0123456789abcdef')}%eth0",
                           f"MEMHOST_HOME=/home/{tok(5).lower()}/.local/share/memhost",
                           f"ID: {R.randrange(10**11, 10**12)}", f"order #{tok(10, string.ascii_uppercase + string.digits)} shipped",
                           f"bucket = \"acme-{tok(8).lower()}-{R.randrange(999)}\"", f"AWS_REGION=eu-west-{R.randrange(1,4)}",
                           f"build {tok(8, string.digits)} passed in {R.randrange(60)}m{R.randrange(60)}s",
                           f"id_{tok(20, string.ascii_lowercase)}", f"class {tok(1,string.ascii_uppercase)}{tok(14, string.ascii_lowercase)}Manager:"]))
json.dump(lines, sys.stdout, indent=0, ensure_ascii=False)
