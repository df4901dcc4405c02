import json, sys, datetime
from jinja2.sandbox import ImmutableSandboxedEnvironment
from jinja2.exceptions import TemplateError
cfg = json.load(open(sys.argv[1])); conv = json.load(open(sys.argv[2]))
def raise_exception(m): raise TemplateError(m)
def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)
def strftime_now(f): return datetime.datetime.now().strftime(f)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = strftime_now
def tok(v): return v if isinstance(v, str) or v is None else v.get("content")
t = env.from_string(cfg["chat_template"])
kw = dict(messages=conv["messages"], add_generation_prompt=True, bos_token=tok(cfg.get("bos_token")), eos_token=tok(cfg.get("eos_token")))
if conv.get("tools"): kw["tools"] = conv["tools"]
sys.stdout.write(t.render(**kw))
