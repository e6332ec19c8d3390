"""Build the redaction corpus: secret shapes (each with the values that must not survive) and
benign text. Fixed seed, so the corpus is the same every run."""
import base64, hashlib, json, random, string, sys, uuid

R = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 14)
A = string.ascii_letters + string.digits
def tok(n, alphabet=A): return "".join(R.choice(alphabet) for _ in range(n))
def up(n): return tok(n, string.ascii_uppercase + "234567")
import zlib
B62 = string.digits + string.ascii_uppercase + string.ascii_lowercase
def crc_tok(prefix):
    body = tok(30)
    n = zlib.crc32(body.encode()); out = ""
    while n: n, r = divmod(n, 62); out = B62[r] + out
    return prefix + body + out.rjust(6, "0")
def hexs(n): return tok(n, "0123456789abcdef")
def b64(n): return tok(n, A + "+/")
def pw():
    return R.choice(["Tr0ub4dor&3", "hunter2-" + tok(4), "S3cr3t!" + tok(5), tok(12),
                     "correct-horse-" + tok(6), "p@ss" + tok(8), tok(10) + "#!", "Winter2024" + tok(3)])
def host(): return R.choice(["db.internal", "10.0.4.12", "localhost", "cache.prod.example.com", "127.0.0.1"])
def user(): return R.choice(["admin", "root", "deploy", "app_user", "postgres", "alice"])

cases = []
def add(family, shape, text, *secrets):
    cases.append({"family": family, "shape": shape, "text": text, "secrets": list(secrets)})

def pem(kind, lines=6, width=64):
    body = [b64(width) for _ in range(lines)]
    return f"-----BEGIN {kind}-----\n" + "\n".join(body) + f"\n-----END {kind}-----", body

for _ in range(int(sys.argv[1]) if len(sys.argv) > 1 else 3):
    p = pw()
    add("url", "url_userinfo", f"DATABASE_URL is postgres://{user()}:{p}@{host()}:5432/app", p)
    p = tok(16)
    add("url", "url_empty_user", f"connect with redis://:{p}@{host()}:6379/0 and retry", p)
    p = f"{tok(5)}@{tok(6)}"
    add("url", "url_at_in_password", f"mysql://{user()}:{p}@{host()}/shop", p)
    p = tok(14)
    add("url", "dsn_malformed", f"could not parse postgres:{p}@{host()}/test", p)
    p = tok(20)
    add("url", "git_https_token", f"git clone https://{user()}:{p}@github.com/acme/tools.git", p)
    p = pw()
    add("url", "mongodb_srv", f"client = MongoClient('mongodb+srv://{user()}:{p}@cluster0.ab12c.mongodb.net/?retryWrites=true')", p)
    p = tok(11)
    add("url", "amqp_url", f"BROKER=amqp://guest:{p}@rabbit:5672//", p)
    p = tok(9) + "%40" + tok(4)
    add("url", "url_percent_encoded", f"smtp://mailer:{p}@smtp.example.org:587", p)

    text, body = pem("RSA PRIVATE KEY")
    add("pem", "pem_rsa", "here is the key:\n" + text, *body)
    text, body = pem("OPENSSH PRIVATE KEY", 5, 70)
    add("pem", "pem_openssh", text + "\n", *body)
    text, body = pem("EC PRIVATE KEY", 3)
    add("pem", "pem_ec", text, *body)
    text, body = pem("RSA PRIVATE KEY", 8)
    head = "\n".join(text.splitlines()[:3])
    add("pem", "pem_truncated", "$ head -3 ~/.ssh/id_rsa\n" + head, *body[:2])
    body = [b64(64) for _ in range(6)]
    add("pem", "pgp_private_block",
        "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n" + "\n".join(body) + "\n=" + b64(4) + "\n-----END PGP PRIVATE KEY BLOCK-----", *body)
    text, body = pem("ENCRYPTED PRIVATE KEY", 4)
    add("pem", "pem_pkcs8_encrypted", text, *body)

    k, s = "AKIA" + up(16), b64(40)
    add("aws", "aws_access_key_id", f"aws_access_key_id = {k}", k)
    add("aws", "aws_secret_in_ini", f"aws_secret_access_key = {s}", s)
    k, s = "AKIA" + up(16), b64(40)
    add("aws", "aws_secret_prose", f"the keys are {k} and {s} for the staging bucket", k, s)
    k, s = "AKIA" + up(16), b64(40)
    add("aws", "aws_csv_export", f"User name,Password,Access key ID,Secret access key,Console login link\n{user()},,{k},{s},https://123456789012.signin.aws.amazon.com/console", k, s)
    k = "ASIA" + up(16)
    add("aws", "aws_session_key", f'"AccessKeyId": "{k}",', k)

    p = pw()
    add("shell", "export_pgpassword", f"export PGPASSWORD={p}", p)
    p = tok(12)
    add("shell", "mysql_p_flag", f"mysql -u{user()} -p{p} -h {host()} shop", p)
    p = tok(10)
    add("shell", "curl_u", f"curl -u admin:{p} https://api.example.com/v1/items", p)
    p = tok(13)
    add("shell", "curl_user_long", f"curl --user deploy:{p} -X POST {host()}", p)
    p = tok(11)
    add("shell", "sshpass", f"sshpass -p '{p}' ssh {user()}@{host()}", p)
    p = tok(15)
    add("shell", "docker_login", f"echo ok && docker login -u ci -p {p} registry.example.com", p)
    p = tok(12)
    add("shell", "mysql_password_flag", f"mysqldump --password={p} --all-databases > dump.sql", p)
    p = tok(14)
    add("shell", "env_prefix", f"PGPASSWORD='{p}' psql -h {host()} -U postgres", p)

    p = R.choice(["blue-giraffe-77", "Sunflower!2024", tok(10), "ilovemycat"])
    add("prose", "wifi_password", f"the wifi password is {p}", p)
    p = tok(9)
    add("prose", "my_password_colon", f"My password: {p} (please don't share)", p)
    p = R.choice(["orange-sky-41", tok(8)])
    add("prose", "password_for", f"The password for the staging server is {p}.", p)
    p = tok(10)
    add("prose", "passphrase_prose", f"Remember that my passphrase is {p}", p)
    p = tok(8)
    add("prose", "pw_was", f"ok so the admin pw was {p} last time", p)

    s = "sk_live_" + tok(24)
    add("vendor", "stripe_live", f"STRIPE_KEY={s}" if R.random() < .5 else f"charge with {s} now", s)
    s = "rk_live_" + tok(24)
    add("vendor", "stripe_restricted", f"restricted key {s}", s)
    s = crc_tok("npm_")
    add("vendor", "npm_token", f"//registry.npmjs.org/:_authToken={s}", s)
    s = crc_tok("npm_")
    add("vendor", "npm_token_bare", f"use {s} for publishing", s)
    s = crc_tok("ghp_")
    add("vendor", "github_pat", f"token {s}", s)
    s = crc_tok("ghp_")
    add("vendor", "github_zero_width", f"my token is {s[:12]}\u200b{s[12:]}", s[:12], s[12:])
    s = crc_tok("ghp_")
    add("vendor", "github_soft_hyphen", f"GH: {s[:20]}\u00ad{s[20:]}", s[:20], s[20:])
    s = "github_pat_" + tok(22) + "_" + tok(59)
    add("vendor", "github_fine_grained", s, s)
    s = "xoxb-" + tok(11, string.digits) + "-" + tok(13, string.digits) + "-" + tok(24)
    add("vendor", "slack_bot", f"SLACK_BOT_TOKEN: {s}", s)
    s = "T" + up(8) + "/B" + up(10) + "/" + tok(24)
    add("vendor", "slack_webhook", f"post to https://hooks.slack.com/services/{s}", s)
    k = b64(86) + "=="
    add("vendor", "azure_account_key", f"DefaultEndpointsProtocol=https;AccountName=acme;AccountKey={k};EndpointSuffix=core.windows.net", k)
    sig = tok(43) + "%3D"
    add("vendor", "azure_sas", f"https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2030-01-01&sig={sig}", sig)
    s = "sk-proj-" + tok(48)
    add("vendor", "openai", f"OPENAI_API_KEY={s}", s)
    s = "sk-ant-api03-" + tok(93, A + "_-") + "AA"
    add("vendor", "anthropic", f"key: {s}", s)
    s = "AIza" + tok(35, A + "_-")
    add("vendor", "google_api", f"maps key {s}", s)
    s = "glpat-" + tok(20, A + "_-")
    add("vendor", "gitlab", f"CI_TOKEN={s}", s)
    s = "hf_" + tok(34, string.ascii_letters)
    add("vendor", "huggingface", f"huggingface-cli login --token {s}", s)
    s = "pypi-AgEIcHlwaS5vcmc" + tok(60, A + "_-")
    add("vendor", "pypi", f"password = {s}" if R.random() < .5 else f"twine upload -p {s} dist/*", s)
    s = "SG." + tok(22, A + "_-") + "." + tok(43, A + "_-")
    add("vendor", "sendgrid", f"sendgrid {s}", s)
    s = "SK" + hexs(32)
    add("vendor", "twilio", f"twilio api key {s} secret {tok(32)}", s)
    s = "shpat_" + hexs(32)
    add("vendor", "shopify", f"X-Shopify-Access-Token: {s}", s)
    s = "dop_v1_" + hexs(64)
    add("vendor", "digitalocean", f"doctl auth init -t {s}", s)
    s = "hvs." + tok(24)
    add("vendor", "vault", f"VAULT_TOKEN={s}", s)
    s = f"{tok(9, string.digits)}:AA{tok(33, A + '_-')}"
    add("vendor", "telegram_bot", f"bot = Bot('{s}')", s)
    s = "lin_api_" + tok(40)
    add("vendor", "linear", f"linear key {s}", s)
    s = "AGE-SECRET-KEY-1" + tok(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")
    add("vendor", "age_key", s, s)
    h, p, sig = (base64.urlsafe_b64encode(json.dumps(x).encode()).decode().rstrip("=") for x in
                 ({"alg": "HS256", "typ": "JWT"}, {"sub": tok(6), "iat": 1700000000}, {"s": tok(30)}))
    add("vendor", "jwt", f"cookie: session={h}.{p}.{sig}", f"{h}.{p}.{sig}")
    s = "dapi" + hexs(32)
    add("vendor", "databricks", f"databricks token {s}", s)
    s = "PMAK-" + hexs(24) + "-" + hexs(34)
    add("vendor", "postman", f"x-api-key {s}", s)

    p = pw()
    add("assign", "py_assign", f'password = "{p}"', p)
    p = tok(24)
    add("assign", "env_line", f"DB_PASSWORD={p}", p)
    p = tok(18)
    add("assign", "yaml", f"  client_secret: {p}", p)
    p = tok(32)
    add("assign", "json", f'{{"api_key": "{p}", "region": "eu"}}', p)
    p = tok(12)
    add("assign", "netrc", f"machine api.example.com login {user()} password {p}", p)
    p = base64.b64encode(f"{user()}:{tok(10)}".encode()).decode()
    add("assign", "basic_header", f"Authorization: Basic {p}", p)
    p = tok(40, A + "._-")
    add("assign", "bearer_header", f"-H 'Authorization: Bearer {p}'", p)
    p = tok(32)
    add("assign", "x_api_key", f"X-Api-Key: {p}", p)
    p = hexs(40)
    add("assign", "gcp_private_key_id", f'"private_key_id": "{p}",', p)
    body = [b64(64) for _ in range(4)]
    add("assign", "gcp_sa_json", '"private_key": "-----BEGIN PRIVATE KEY-----\\n' + "\\n".join(body) + '\\n-----END PRIVATE KEY-----\\n",', *body)

json.dump(cases, sys.stdout, indent=1, ensure_ascii=False)
