"""The rows of the table function clickbench_hits: a synthetic ClickBench `hits`, the 105
columns of create.sql (planner/table_functions.py's HITS_COLUMNS) with realistic shapes.

`block(seed, rows, i)` returns block i (BLOCK_ROWS rows, the last one shorter) of a table
of `rows` rows as an Arrow RecordBatch whose columns have the physical types raympp
stores (int16/32/64, string, date32, timestamp[us]). A block depends only on (seed, rows,
i), never on who generates it or in which order, so blocks can be made in parallel
processes and the table is the same for every degree of parallelism.

The shapes imitate the real dataset (one month of Yandex.Metrica hits, July 2013):
- users and counters are Zipf-distributed (a few heavy users; counter 62 is the biggest,
  as the queries that filter on it expect); a user keeps her region, IP, OS, browser,
  screen and phone model across her hits;
- URLs are scheme + the counter's site + a Zipf-chosen path, so they share prefixes;
  referers come from search engines, from the same site or from other sites, 40% empty;
  URLHash and RefererHash are functions of the URL / referer, and the constants that
  queries 40 and 41 look for are given to one popular URL and one referer;
- about 87% of search phrases are empty, the others Zipf over a phrase vocabulary, with
  a search engine set when a phrase is; titles belong to pages;
- most flags and counters are zero and most rare text columns empty;
- event times are spread over 2013-07-01 .. 2013-07-31 with a daily rhythm.

The vocabularies (users, sites, paths, phrases, titles) depend on (seed, rows) and are
built once per process. Segments run `block` for their share of a call's blocks
(segment/operators/table_function.py); the ClickBench kit (workloads/clickbench/) also
writes blocks to Parquet for other engines. Loading them is the kit's business.
"""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from planner.table_functions import BLOCK_ROWS, HITS_COLUMNS, block_rows

# Constants the published queries filter on, given to real-looking rows.
TOP_COUNTER = 62                        # queries 37-43: CounterID = 62
KNOWN_USER = 435090932899640449         # query 20: UserID = 435090932899640449
KNOWN_REFERER_HASH = 3594120000172545465  # query 40
KNOWN_URL_HASH = 2868770270353813622    # query 41

MONTH_START_S = 1372636800              # 2013-07-01 00:00:00 UTC, seconds
MONTH_DAYS = 31

_SYLLABLES = ("ya", "ma", "ru", "net", "ka", "lo", "vo", "sta", "pri", "to", "go", "di",
              "mir", "bank", "auto", "news", "shop", "kino", "tv", "sport", "mo", "zon",
              "ki", "re", "el", "ba", "tor", "pro", "in", "fo")
_TLDS = (".ru", ".ru", ".ru", ".com", ".net", ".ua", ".org", ".com.tr", ".by", ".kz")
_SECTIONS = ("news", "catalog", "item", "forum", "video", "search", "photo", "user",
             "article", "cars", "realty", "job", "market", "weather", "maps", "mail",
             "blog", "tag", "page", "category")
_WORDS = ("купить", "скачать", "бесплатно", "онлайн", "смотреть", "фильм", "погода",
          "москва", "новости", "авто", "квартира", "работа", "игры", "музыка", "книга",
          "цена", "отзывы", "фото", "видео", "карта", "рецепт", "сериал", "ремонт",
          "дешево", "google", "как", "что", "где", "2013", "spb", "iphone", "samsung",
          "windows", "торрент", "одноклассники", "вконтакте", "mail", "яндекс", "банк",
          "кредит", "такси", "отель", "билеты", "школа", "детские", "одежда", "обувь")
_SEARCH_HOSTS = ("http://yandex.ru/yandsearch?text=", "http://www.google.ru/search?q=",
                 "http://go.mail.ru/search?q=", "http://nova.rambler.ru/search?query=",
                 "http://www.bing.com/search?q=")
_PHONE_MODELS = ("iPad", "iPhone", "GT-I9300", "HTC Desire", "GT-I9100", "Lumia 920",
                 "Xperia Z", "GT-N7100", "Nexus 7", "GT-S5830")
_LANGUAGES = ("ru", "ru", "ru", "en", "uk", "tr", "be", "kk", "de")
_COUNTRIES = ("ru", "ru", "ru", "ua", "tr", "by", "kz", "us", "de")
_CHARSETS = ("utf-8", "windows-1251", "", "koi8-r")
_HIT_COLORS = ("5", "D", "E", "F")
_SCREENS = ((1366, 768), (1920, 1080), (1280, 1024), (1280, 800), (1024, 768),
            (1600, 900), (1440, 900), (1680, 1050), (1920, 1200), (360, 640), (320, 480))
_ADV_ENGINES = np.array([2, 27, 13, 45, 3, 52, 50, 48, 12, 16], dtype=np.int16)
_SEARCH_ENGINES = np.array([2, 3, 1, 4, 5, 13, 6], dtype=np.int16)
_TRAFIC_SOURCES = np.array([-1, 0, 1, 2, 3, 5, 6, 7, 8, 10], dtype=np.int16)
_TRAFIC_WEIGHTS = np.array([8, 40, 15, 20, 3, 4, 5, 2, 2, 1], dtype=np.float64)
_SOCIAL = ("", "vkontakte", "odnoklassniki", "facebook", "twitter")
_UTM = ("", "yandex", "google", "email", "vk")
_CURRENCIES = ("", "RUB", "USD", "EUR")


# --------------------------------------------------------------------------- helpers

def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64 finaliser: a well-spread uint64 function of uint64 x."""
    x = x.astype(np.uint64, copy=True)
    with np.errstate(over="ignore"):
        x += np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return x ^ (x >> np.uint64(31))


def _hash_pair(a: np.ndarray, b: np.ndarray, salt: int) -> np.ndarray:
    """A positive int64 hash of the pair (a, b) of non-negative integers."""
    with np.errstate(over="ignore"):
        h = _mix(a.astype(np.uint64) * np.uint64(0x100000001B3) ^ np.uint64(salt))
        h = _mix(h ^ b.astype(np.uint64))
    return (h >> np.uint64(1)).astype(np.int64)


def _zipf(rng: np.random.Generator, n: int, s: float, size: int) -> np.ndarray:
    """Indexes 0..n-1 with P(i) roughly proportional to 1/(i+1)^s (inverse of the
    continuous CDF: vectorised and O(1) per sample)."""
    u = rng.random(size)
    if abs(s - 1.0) < 1e-9:
        x = np.exp(u * np.log(n + 1.0)) - 1.0
    else:
        a = 1.0 - s
        x = (1.0 + u * ((n + 1.0) ** a - 1.0)) ** (1.0 / a) - 1.0
    return np.minimum(x.astype(np.int64), n - 1)


def _choice(rng: np.random.Generator, values, weights, size: int) -> np.ndarray:
    p = np.asarray(weights, dtype=np.float64)
    return np.asarray(values)[rng.choice(len(p), size=size, p=p / p.sum())]


def _strings(values) -> pa.Array:
    return pa.array(list(values), pa.string())


def _take(vocab: pa.Array, idx: np.ndarray) -> pa.Array:
    return vocab.take(pa.array(idx, pa.int32()))


def _concat(*parts: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(*parts, "")


def _rare_strings(rng, vocab: tuple[str, ...], p_nonempty: float, n: int) -> pa.Array:
    """Mostly '' with a fraction p_nonempty drawn from vocab (vocab[0] must be '')."""
    idx = np.where(rng.random(n) < p_nonempty, rng.integers(1, len(vocab), n), 0)
    return _take(_strings(vocab), idx)


# --------------------------------------------------------------------------- vocabularies

class Vocabulary:
    """Everything rows draw from, a function of (seed, rows) only."""

    def __init__(self, seed: int, rows: int):
        rng = np.random.default_rng([seed, 0x5EED])
        self.n_users = max(1_000, rows // 6)
        self.n_counters = max(100, min(20_000, rows // 200))
        self.n_domains = max(200, min(30_000, rows // 100))
        self.n_paths = 20_000
        self.n_phrases = max(500, min(500_000, rows // 40))
        self.n_titles = max(1_000, min(200_000, rows // 20))

        # Users and what stays fixed for a user.
        self.user_id = rng.integers(1, 2**63 - 1, self.n_users, dtype=np.int64)
        self.user_id[min(17, self.n_users - 1)] = KNOWN_USER
        self.user_perm = rng.permutation(self.n_users)
        u = self.n_users
        regions = np.unique(np.concatenate([[229, 2, 208, 1, 34, 158, 184, 107, 42, 47],
                                            rng.integers(3, 10_000, 3_000)]))
        regions = np.concatenate([[229, 2, 208, 1, 34, 158, 184, 107, 42, 47],
                                  regions[~np.isin(regions, [229, 2, 208, 1, 34, 158, 184,
                                                             107, 42, 47])]])
        self.user_region = regions[_zipf(rng, len(regions), 1.2, u)].astype(np.int32)
        self.user_ip = rng.integers(-2**31, 2**31 - 1, u, dtype=np.int64).astype(np.int32)
        self.user_network = rng.integers(0, 4_000_000, u).astype(np.int32)
        self.user_os = _choice(rng, [2, 3, 4, 5, 11, 44, 56, 72, 128],
                               [30, 15, 20, 5, 5, 5, 5, 8, 7], u).astype(np.int16)
        self.user_agent = _choice(rng, [2, 3, 4, 6, 7, 49, 58, 72],
                                  [20, 15, 30, 10, 5, 5, 10, 5], u).astype(np.int16)
        self.user_agent_major = rng.integers(1, 30, u).astype(np.int16)
        screen = _zipf(rng, len(_SCREENS), 1.0, u)
        self.user_screen_w = np.array([s[0] for s in _SCREENS], np.int16)[screen]
        self.user_screen_h = np.array([s[1] for s in _SCREENS], np.int16)[screen]
        mobile = rng.random(u) < 0.08
        self.user_is_mobile = mobile.astype(np.int16)
        self.user_phone = np.where(mobile, rng.integers(1, 12, u), 0).astype(np.int16)
        self.user_phone_model = np.where(mobile, 1 + _zipf(rng, len(_PHONE_MODELS), 1.0, u), 0)
        self.user_language = _zipf(rng, len(_LANGUAGES), 0.8, u)
        self.user_country = _zipf(rng, len(_COUNTRIES), 0.8, u)
        self.user_flash = _choice(rng, [0, 11, 10, 9], [20, 60, 15, 5], u).astype(np.int16)
        self.user_java = (rng.random(u) < 0.3).astype(np.int16)
        self.user_age = rng.integers(0, 6, u).astype(np.int16)
        self.user_sex = rng.integers(0, 3, u).astype(np.int16)
        self.user_income = rng.integers(0, 4, u).astype(np.int16)
        self.user_tz = _choice(rng, [-1, 3, 4, 2, 6], [10, 70, 8, 8, 4], u).astype(np.int16)
        self.phone_models = _strings(("",) + _PHONE_MODELS)
        self.languages = _strings(_LANGUAGES)
        self.countries = _strings(_COUNTRIES)

        # Counters (sites): counter rank 0 is CounterID 62, the biggest.
        ids = rng.choice(np.arange(1, 300_000), self.n_counters, replace=False)
        ids = ids[ids != TOP_COUNTER][: self.n_counters - 1]
        self.counter_id = np.concatenate([[TOP_COUNTER], ids]).astype(np.int32)
        self.counter_domain = rng.integers(0, self.n_domains, self.n_counters)
        self.counter_domain[0] = 0

        # Domains: syllable names; a few are Google's.
        names = []
        for i in range(self.n_domains):
            k = 2 + int(rng.integers(0, 3))
            name = "".join(_SYLLABLES[j] for j in rng.integers(0, len(_SYLLABLES), k))
            tld = _TLDS[int(rng.integers(0, len(_TLDS)))]
            www = "www." if rng.random() < 0.4 else ""
            names.append(f"{www}{name}{i}{tld}")
        for i, g in zip(rng.choice(np.arange(1, self.n_domains), 4, replace=False),
                        ("www.google.ru", "google.com", "maps.google.com", "mail.google.com")):
            names[int(i)] = g
        self.domains = _strings(names)

        # Paths: sections, numbers, extensions and query strings.
        paths = []
        for i in range(self.n_paths):
            sec = _SECTIONS[int(rng.integers(0, len(_SECTIONS)))]
            r = rng.random()
            num = int(rng.integers(1, 10_000_000))
            if i == 0:
                paths.append("/")
            elif r < 0.35:
                paths.append(f"/{sec}/{num}.html")
            elif r < 0.6:
                paths.append(f"/{sec}/?id={num}&page={int(rng.integers(1, 50))}")
            elif r < 0.8:
                sub = _SECTIONS[int(rng.integers(0, len(_SECTIONS)))]
                paths.append(f"/{sec}/{sub}/{num}/")
            elif r < 0.99 or i < 100:  # no popular page is Google's
                paths.append(f"/{sec}/{num}?utm_source=direct&from=tab_{num % 97}")
            else:
                paths.append(f"/{sec}/{num}?from=google")
        self.paths = _strings(paths)

        # Search phrases and titles: words, Zipf-chosen.
        wz = _zipf(rng, len(_WORDS), 0.9, self.n_phrases * 3).reshape(-1, 3)
        nw = rng.integers(1, 4, self.n_phrases)
        self.phrases = _strings(
            " ".join(_WORDS[j] for j in wz[i, :nw[i]]) + ("" if i < len(_WORDS) else f" {i}")
            for i in range(self.n_phrases))
        tz = _zipf(rng, len(_WORDS), 0.7, self.n_titles * 4).reshape(-1, 4)
        titles = []
        for i in range(self.n_titles):
            words = [_WORDS[j] for j in tz[i, : 2 + i % 3]]
            head = "Google" if i % 97 == 5 else words[0].capitalize()
            titles.append(f"{head} {' '.join(words[1:])} — страница {i}")
        titles[0] = ""
        self.titles = _strings(titles)

        self.schemes = _strings(("http://", "https://"))
        self.search_hosts = _strings(_SEARCH_HOSTS)
        # The popular URL and referer that queries 40 and 41 look for.
        self.known_url = (0, 0, 0)       # (scheme, domain, path): http://<site of 62>/
        self.known_referer = (0, 1, 1)   # (scheme, referring domain index, path)


@functools.lru_cache(maxsize=2)
def vocabulary(seed: int, rows: int) -> Vocabulary:
    return Vocabulary(seed, rows)


# --------------------------------------------------------------------------- rows

def _url_hash(scheme, domain, path, known) -> np.ndarray:
    h = _hash_pair(domain * 2 + scheme, path, 0x0A11)
    k = _hash_pair(np.array([known[1] * 2 + known[0]]), np.array([known[2]]), 0x0A11)[0]
    return h, k


def block(seed: int, rows: int, i: int, size: int = BLOCK_ROWS) -> pa.RecordBatch:
    """Block i of the synthetic `hits` of `rows` rows, cut in blocks of `size` rows (see
    the module docstring; the table depends on the block size too)."""
    n = block_rows(rows, i, size)
    v = vocabulary(seed, rows)
    rng = np.random.default_rng([seed, i, 0xB10C])
    cols: dict[str, pa.Array | np.ndarray] = {}

    # A fixed permutation spreads popularity over the user table (user 0 is not the
    # heaviest); a mild exponent keeps the heaviest user near 0.05% of the hits.
    user = v.user_perm[_zipf(rng, v.n_users, 0.6, n)]
    counter = _zipf(rng, v.n_counters, 1.05, n)

    # Time: uniform days, a daily rhythm (fewer hits at night).
    day = rng.integers(0, MONTH_DAYS, n)
    hour = np.mod(rng.normal(14.0, 5.0, n), 24.0)
    secs = MONTH_START_S + day * 86_400 + (hour * 3600).astype(np.int64)
    event_us = secs * 1_000_000
    tz_shift = v.user_tz[user].astype(np.int64) * 3_600_000_000

    # URL: scheme + the counter's site (sometimes another site) + a Zipf path.
    scheme = (rng.random(n) < 0.25).astype(np.int64)
    own_site = rng.random(n) < 0.9
    domain = np.where(own_site, v.counter_domain[counter], _zipf(rng, v.n_domains, 1.0, n))
    path = _zipf(rng, v.n_paths, 1.1, n)
    url = _concat(_take(v.schemes, scheme), _take(v.domains, domain), _take(v.paths, path))
    url_hash, known_url = _url_hash(scheme, domain, path, v.known_url)
    url_hash = np.where(url_hash == known_url, KNOWN_URL_HASH, url_hash)

    # Search phrase: ~13% non-empty.
    searched = rng.random(n) < 0.13
    phrase_idx = _zipf(rng, v.n_phrases, 1.0, n)
    phrase = pc.if_else(pa.array(searched), _take(v.phrases, phrase_idx), "")
    engine_idx = _zipf(rng, len(_SEARCH_ENGINES), 1.2, n)
    engine = np.where(searched, _SEARCH_ENGINES[engine_idx], 0)

    # Referer: from the search engine when searched, else 40% empty, else a Zipf site.
    ref_kind = rng.random(n)
    ref_empty = ~searched & (ref_kind < 0.4)
    ref_domain = _zipf(rng, v.n_domains, 1.0, n)
    ref_path = _zipf(rng, v.n_paths, 1.2, n)
    ref_scheme = (rng.random(n) < 0.2).astype(np.int64)
    site_ref = _concat(_take(v.schemes, ref_scheme), _take(v.domains, ref_domain),
                       _take(v.paths, ref_path))
    search_ref = _concat(_take(v.search_hosts, engine_idx % len(_SEARCH_HOSTS)),
                         _take(v.phrases, phrase_idx))
    referer = pc.if_else(pa.array(searched), search_ref,
                         pc.if_else(pa.array(ref_empty), "", site_ref))
    ref_hash, known_ref = _url_hash(ref_scheme, ref_domain, ref_path, v.known_referer)
    ref_hash = np.where(ref_hash == known_ref, KNOWN_REFERER_HASH, ref_hash)
    ref_hash = np.where(searched, _hash_pair(engine, phrase_idx, 0x5EA5), ref_hash)
    ref_hash = np.where(ref_empty, 0, ref_hash)

    adv = np.where(rng.random(n) < 0.02, _ADV_ENGINES[_zipf(rng, len(_ADV_ENGINES), 1.0, n)], 0)
    trafic = np.where(searched, 2, _choice(rng, _TRAFIC_SOURCES, _TRAFIC_WEIGHTS, n))
    title_idx = np.where(rng.random(n) < 0.08, 0,
                         (_hash_pair(domain, path, 0x717E) % v.n_titles))
    screen_w, screen_h = v.user_screen_w[user], v.user_screen_h[user]
    has_window = rng.random(n) < 0.85

    def sparse(p: float, hi: int) -> np.ndarray:
        """Zero, except a fraction p of rows in 1..hi-1."""
        return np.where(rng.random(n) < p, rng.integers(1, hi, n), 0)

    cols["watchid"] = rng.integers(1, 2**63 - 1, n, dtype=np.int64)
    cols["javaenable"] = v.user_java[user]
    cols["title"] = _take(v.titles, title_idx)
    cols["goodevent"] = np.where(rng.random(n) < 0.999, 1, 0)
    cols["eventtime"] = pa.array(event_us, pa.timestamp("us"))
    cols["eventdate"] = pa.array((secs // 86_400).astype(np.int32), pa.date32())
    cols["counterid"] = v.counter_id[counter]
    cols["clientip"] = v.user_ip[user]
    cols["regionid"] = v.user_region[user]
    cols["userid"] = v.user_id[user]
    cols["counterclass"] = rng.integers(0, 3, n)
    cols["os"] = v.user_os[user]
    cols["useragent"] = v.user_agent[user]
    cols["url"] = url
    cols["referer"] = referer
    cols["isrefresh"] = (rng.random(n) < 0.1).astype(np.int16)
    cols["referercategoryid"] = sparse(0.3, 20)
    cols["refererregionid"] = np.where(ref_empty, 0, v.user_region[user])
    cols["urlcategoryid"] = sparse(0.4, 20)
    cols["urlregionid"] = v.user_region[user]
    cols["resolutionwidth"] = screen_w
    cols["resolutionheight"] = screen_h
    cols["resolutiondepth"] = _choice(rng, [24, 32, 16, 0], [60, 30, 5, 5], n)
    cols["flashmajor"] = v.user_flash[user]
    cols["flashminor"] = np.where(v.user_flash[user] > 0, rng.integers(0, 9, n), 0)
    cols["flashminor2"] = _rare_strings(rng, ("", "0", "1", "2", "3", "5"), 0.3, n)
    cols["netmajor"] = sparse(0.2, 5)
    cols["netminor"] = sparse(0.2, 10)
    cols["useragentmajor"] = v.user_agent_major[user]
    cols["useragentminor"] = _rare_strings(rng, ("", "0", "3", "D0", "1", "5", "10"), 0.7, n)
    cols["cookieenable"] = (rng.random(n) < 0.97).astype(np.int16)
    cols["javascriptenable"] = (rng.random(n) < 0.95).astype(np.int16)
    cols["ismobile"] = v.user_is_mobile[user]
    cols["mobilephone"] = v.user_phone[user]
    cols["mobilephonemodel"] = _take(v.phone_models, v.user_phone_model[user])
    cols["params"] = _rare_strings(rng, ("", "id=1", "p=2&s=1", "{\"a\":1}"), 0.02, n)
    cols["ipnetworkid"] = v.user_network[user]
    cols["traficsourceid"] = trafic
    cols["searchengineid"] = engine
    cols["searchphrase"] = phrase
    cols["advengineid"] = adv
    cols["isartifical"] = (rng.random(n) < 0.01).astype(np.int16)
    cols["windowclientwidth"] = np.where(has_window, screen_w - rng.integers(0, 40, n), 0)
    cols["windowclientheight"] = np.where(has_window, screen_h - rng.integers(60, 200, n), 0)
    cols["clienttimezone"] = v.user_tz[user]
    cols["clienteventtime"] = pa.array(event_us + tz_shift - rng.integers(0, 5, n) * 1_000_000,
                                       pa.timestamp("us"))
    cols["silverlightversion1"] = sparse(0.2, 6)
    cols["silverlightversion2"] = sparse(0.2, 2)
    cols["silverlightversion3"] = sparse(0.2, 60_000)
    cols["silverlightversion4"] = sparse(0.2, 3)
    cols["pagecharset"] = _take(_strings(_CHARSETS), _choice(rng, [0, 1, 2, 3],
                                                             [50, 30, 18, 2], n))
    cols["codeversion"] = _choice(rng, [0, 134, 291, 505, 592], [20, 10, 20, 30, 20], n)
    cols["islink"] = (rng.random(n) < 0.03).astype(np.int16)
    cols["isdownload"] = (rng.random(n) < 0.01).astype(np.int16)
    cols["isnotbounce"] = (rng.random(n) < 0.2).astype(np.int16)
    cols["funiqid"] = np.where(rng.random(n) < 0.6, 0, rng.integers(1, 2**62, n))
    cols["originalurl"] = pc.if_else(pa.array(rng.random(n) < 0.05), url, "")
    cols["hid"] = rng.integers(1, 2**31 - 1, n)
    cols["isoldcounter"] = (rng.random(n) < 0.05).astype(np.int16)
    cols["isevent"] = (rng.random(n) < 0.02).astype(np.int16)
    cols["isparameter"] = (rng.random(n) < 0.01).astype(np.int16)
    cols["dontcounthits"] = (rng.random(n) < 0.05).astype(np.int16)
    cols["withhash"] = (rng.random(n) < 0.03).astype(np.int16)
    cols["hitcolor"] = _take(_strings(_HIT_COLORS), _choice(rng, [0, 1, 2, 3],
                                                            [10, 50, 30, 10], n))
    cols["localeventtime"] = pa.array(event_us + tz_shift, pa.timestamp("us"))
    cols["age"] = v.user_age[user]
    cols["sex"] = v.user_sex[user]
    cols["income"] = v.user_income[user]
    cols["interests"] = sparse(0.3, 1_000)
    cols["robotness"] = sparse(0.02, 100)
    cols["remoteip"] = v.user_ip[user]
    cols["windowname"] = sparse(0.3, 100_000)
    cols["openername"] = sparse(0.1, 100_000)
    cols["historylength"] = sparse(0.5, 20)
    cols["browserlanguage"] = _take(v.languages, v.user_language[user])
    cols["browsercountry"] = _take(v.countries, v.user_country[user])
    cols["socialnetwork"] = _rare_strings(rng, _SOCIAL, 0.01, n)
    cols["socialaction"] = _rare_strings(rng, ("", "like", "share"), 0.005, n)
    cols["httperror"] = np.where(rng.random(n) < 0.005, 404, 0)
    cols["sendtiming"] = sparse(0.1, 3_000)
    cols["dnstiming"] = sparse(0.1, 300)
    cols["connecttiming"] = sparse(0.1, 500)
    cols["responsestarttiming"] = sparse(0.1, 2_000)
    cols["responseendtiming"] = sparse(0.1, 5_000)
    cols["fetchtiming"] = sparse(0.1, 3_000)
    cols["socialsourcenetworkid"] = sparse(0.01, 5)
    cols["socialsourcepage"] = _rare_strings(rng, ("", "http://vk.com/feed",
                                                   "http://ok.ru/"), 0.01, n)
    cols["paramprice"] = sparse(0.01, 100_000)
    cols["paramorderid"] = _rare_strings(rng, ("", "A-1", "B-22", "C-333"), 0.005, n)
    cols["paramcurrency"] = _rare_strings(rng, _CURRENCIES, 0.01, n)
    cols["paramcurrencyid"] = sparse(0.01, 4)
    cols["openstatservicename"] = _rare_strings(rng, ("", "direct.yandex.ru", "begun.ru"),
                                                0.01, n)
    cols["openstatcampaignid"] = _rare_strings(rng, ("", "1234", "5678"), 0.01, n)
    cols["openstatadid"] = _rare_strings(rng, ("", "987", "654"), 0.01, n)
    cols["openstatsourceid"] = _rare_strings(rng, ("", "site.ru", "news.ru"), 0.01, n)
    cols["utmsource"] = _rare_strings(rng, _UTM, 0.03, n)
    cols["utmmedium"] = _rare_strings(rng, ("", "cpc", "email", "banner"), 0.03, n)
    cols["utmcampaign"] = _rare_strings(rng, ("", "summer", "sale2013"), 0.02, n)
    cols["utmcontent"] = _rare_strings(rng, ("", "top", "side"), 0.01, n)
    cols["utmterm"] = _rare_strings(rng, ("", "buy", "cheap"), 0.01, n)
    cols["fromtag"] = _rare_strings(rng, ("", "mail", "rss"), 0.01, n)
    cols["hasgclid"] = (rng.random(n) < 0.01).astype(np.int16)
    cols["refererhash"] = ref_hash
    cols["urlhash"] = url_hash
    cols["clid"] = sparse(0.05, 10_000)
    return _assemble(cols, n)


_ARROW = {"BIGINT": pa.int64(), "INTEGER": pa.int32(), "SMALLINT": pa.int16(),
          "TEXT": pa.string(), "CHAR": pa.string(), "VARCHAR(255)": pa.string(),
          "TIMESTAMP": pa.timestamp("us"), "DATE": pa.date32()}


def arrow_schema() -> pa.Schema:
    """The physical schema of `hits` (lower-case names, all NOT NULL)."""
    return pa.schema([pa.field(name, _ARROW[t], nullable=False) for name, t in HITS_COLUMNS])


def _assemble(cols: dict, n: int) -> pa.RecordBatch:
    schema = arrow_schema()
    missing = [f.name for f in schema if f.name not in cols]
    if missing:
        raise AssertionError(f"synthetic hits lacks columns {missing}")
    arrays = []
    for f in schema:
        c = cols[f.name]
        if isinstance(c, np.ndarray):
            arrays.append(pa.array(c.astype(f.type.to_pandas_dtype(), copy=False), f.type))
        else:
            arrays.append(c if c.type == f.type else c.cast(f.type))
        if len(arrays[-1]) != n:
            raise AssertionError(f"column {f.name}: {len(arrays[-1])} values, not {n}")
    return pa.RecordBatch.from_arrays(arrays, schema=schema)
