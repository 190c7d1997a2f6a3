#!/usr/bin/env python3
"""Renders chat templates of the forms models ship with jinja2 set up as transformers sets it up
(sandboxed, trim_blocks and lstrip_blocks on, raise_exception, tojson), and writes
chat_templates.json: {cases: [{name, template, messages, add_generation_prompt, bos_token,
eos_token, expected}]}. The templates follow the published ones of Llama-2, Llama-3, ChatML (Qwen),
Gemma, Phi-3, Mistral and a namespace()-using one (Qwen2.5's system-prompt handling); vkc's
renderer must give the same strings (chat_template_test.cpp).

Usage: python3 make_chat_templates.py  (needs jinja2)
"""
import json
import os

from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATES = {
    "llama3": ("{{ bos_token }}{% for message in messages %}{{ '<|start_header_id|>' + message['role'] + "
               "'<|end_header_id|>\n\n' + message['content'] | trim + '<|eot_id|>' }}{% endfor %}"
               "{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}"),
    "chatml": ("{% for message in messages %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + "
               "'<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"),
    "llama2": """{% if messages[0]['role'] == 'system' %}
    {% set loop_messages = messages[1:] %}
    {% set system_message = messages[0]['content'] %}
{% else %}
    {% set loop_messages = messages %}
    {% set system_message = false %}
{% endif %}
{% for message in loop_messages %}
    {% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}
    {% endif %}
    {% if loop.index0 == 0 and system_message != false %}
        {% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}
    {% else %}
        {% set content = message['content'] %}
    {% endif %}
    {% if message['role'] == 'user' %}
        {{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}
    {% elif message['role'] == 'assistant' %}
        {{ ' '  + content.strip() + ' ' + eos_token }}
    {% endif %}
{% endfor %}""",
    "gemma": ("{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}"
              "{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}"
              "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}"
              "{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}"
              "{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}"
              "{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}"),
    "phi3": ("{% for message in messages %}{% if message['role'] == 'system' %}{{'<|system|>\n' + message['content'] + "
             "'<|end|>\n'}}{% elif message['role'] == 'user' %}{{'<|user|>\n' + message['content'] + '<|end|>\n'}}"
             "{% elif message['role'] == 'assistant' %}{{'<|assistant|>\n' + message['content'] + '<|end|>\n'}}{% endif %}"
             "{% endfor %}{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% else %}{{ eos_token }}{% endif %}"),
    "mistral": """{%- if messages[0]['role'] == 'system' %}
    {%- set system_message = messages[0]['content'] %}
    {%- set loop_messages = messages[1:] %}
{%- else %}
    {%- set loop_messages = messages %}
{%- endif %}

{{- bos_token }}
{%- for message in loop_messages %}
    {%- if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}
        {{- raise_exception('After the optional system message, conversation roles must alternate user/assistant/user/assistant/...') }}
    {%- endif %}
    {%- if message['role'] == 'user' %}
        {%- if loop.first and system_message is defined %}
            {{- ' [INST] ' + system_message + '\\n\\n' + message['content'] + ' [/INST]' }}
        {%- else %}
            {{- ' [INST] ' + message['content'] + ' [/INST]' }}
        {%- endif %}
    {%- elif message['role'] == 'assistant' %}
        {{- ' ' + message['content'] + eos_token}}
    {%- else %}
        {{- raise_exception('Only user and assistant roles are supported, with the exception of an initial optional system message!') }}
    {%- endif %}
{%- endfor %}
""",
    "qwen25": """{%- set ns = namespace(has_system=false, count=0) %}
{%- for message in messages %}
    {%- if message.role == "system" %}{%- set ns.has_system = true %}{%- endif %}
    {%- set ns.count = ns.count + 1 %}
{%- endfor %}
{%- if not ns.has_system %}
    {{- '<|im_start|>system\\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\\n' }}
{%- endif %}
{%- for message in messages if message.content is string %}
    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>' + '\\n' }}
{%- endfor %}
{%- if add_generation_prompt %}
    {{- '<|im_start|>assistant\\n' }}
{%- endif %}
{#- a comment #}
{{- '' if ns.count > 1 else '' }}""",
}

MESSAGES = {
    "user": [{"role": "user", "content": "Hello! Wie geht's? 你好 😀"}],
    "system_user": [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "  Name a prime.  "}],
    "turns": [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello, how can I help?"},
              {"role": "user", "content": "Count to 3"}],
}


def main():
    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)

    def raise_exception(message):
        raise RuntimeError(message)

    env.globals["raise_exception"] = raise_exception
    cases = []
    for name, tmpl in TEMPLATES.items():
        compiled = env.from_string(tmpl)
        for mname, msgs in MESSAGES.items():
            for gen in (True, False):
                try:
                    expected = compiled.render(messages=msgs, add_generation_prompt=gen, bos_token="<s>",
                                               eos_token="</s>")
                    error = None
                except RuntimeError as e:
                    expected, error = None, str(e)
                cases.append({"name": f"{name}/{mname}/{'gen' if gen else 'nogen'}", "template": tmpl,
                              "messages": msgs, "add_generation_prompt": gen, "bos_token": "<s>",
                              "eos_token": "</s>", "expected": expected, "error": error})
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "chat_templates.json"), "w") as f:
        json.dump({"cases": cases}, f, indent=1, ensure_ascii=False)
    print(f"{len(cases)} cases, {sum(c['error'] is not None for c in cases)} raising")


if __name__ == "__main__":
    main()
