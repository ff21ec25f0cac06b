"""GitHub Models prompt files (``*.prompt.yml``) taken from GitHub's own documentation, for the tests of the
format's reader, its export and the server that serves them.

``SUMMARIZER`` is the example of "Storing prompts in GitHub repositories", section "Supported file format"
(docs.github.com/en/github-models/use-github-models/storing-prompts-in-github-repositories), as published;
``EVAL_HELP`` the example in the help text of ``gh models eval`` (github/gh-models, cmd/eval/eval.go).
"""

from __future__ import annotations

SUMMARIZER = """\
name: Text Summarizer
description: Summarizes input text concisely
model: openai/gpt-4o-mini
modelParameters:
  temperature: 0.5
messages:
  - role: system
    content: You are a text summarizer. Your only job is to summarize text given to you.
  - role: user
    content: |
      Summarize the given text, beginning with "Summary -":
      <text>
      {{input}}
      </text>
testData:
  - input: |
      The quick brown fox jumped over the lazy dog.
      The dog was too tired to react.
    expected: Summary - A fox jumped over a lazy, unresponsive dog.
evaluators:
  - name: Output should start with 'Summary -'
    string:
      startsWith: 'Summary -'
"""

EVAL_HELP = """\
name: My Evaluation
model: gpt-4o
testData:
  - input: "Hello world"
    expected: "Hello there"
messages:
  - role: user
    content: "Respond to: {{input}}"
evaluators:
  - name: contains-hello
    string:
      contains: "hello"
"""

#: The summarizer with an evaluator that a model runs (GitHub's built-in ``github/similarity``, named in the
#: same page's list of evaluators), which promptdeck keeps and names in a warning.
WITH_SIMILARITY = SUMMARIZER + "  - name: Similarity\n    uses: github/similarity\n"
