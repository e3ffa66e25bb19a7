import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The regular-expression engines of the tools a client or a tester may read the OpenAPI
 * document with, run on this machine: Python's `re`, Java's `java.util.regex` and Go's
 * `regexp` (RE2). Each is given the document's patterns as they are, with only what every such
 * tool already does to an ECMA-262 pattern: a final `$` made the end of the text (`\Z` in
 * Python, `\z` in Java: their `$` also matches before a final newline), and for Go each
 * `\uXXXX` written `\x{XXXX}`, the one escape RE2 spells otherwise.
 *
 * An engine missing from the machine answers null, and the test that asked says so.
 */

/** For each pattern: whether it matched each subject, or why it could not be compiled. */
export type EngineAnswers = Record<string, boolean[] | { error: string }>;

export type EngineName = 'python' | 'java' | 'go';

function installed(command: string, versionArgs: string[]): boolean {
  return spawnSync(command, versionArgs, { stdio: 'ignore' }).status === 0;
}

/** The pattern with its final `$` as `end`, when it ends with an unescaped `$`. */
function endOfText(pattern: string, end: string): string {
  return pattern.endsWith('$') && !pattern.endsWith('\\$') ? `${pattern.slice(0, -1)}${end}` : pattern;
}

/** `\uXXXX` as RE2 writes it; a pattern here escapes no backslash, so there is no `\\u` to mistake. */
export function re2Escapes(pattern: string): string {
  return pattern.replace(/\\u([0-9a-fA-F]{4})/g, '\\x{$1}');
}

const PYTHON = `
import json, re, sys
data = json.load(sys.stdin)
out = {}
for name, pattern in data['patterns'].items():
    try:
        compiled = re.compile(pattern)
    except re.error as error:
        out[name] = {'error': str(error)}
        continue
    out[name] = [compiled.search(s) is not None for s in data['subjects']]
print(json.dumps(out))
`;

const JAVA = `
import java.nio.charset.StandardCharsets;
import java.util.*;
import java.util.regex.*;

public class PatternCheck {
  static String decode(String hex) {
    StringBuilder text = new StringBuilder();
    if (!hex.isEmpty()) for (String unit : hex.split(",")) text.append((char) Integer.parseInt(unit, 16));
    return text.toString();
  }
  public static void main(String[] args) {
    Scanner in = new Scanner(System.in, StandardCharsets.UTF_8);
    List<String> names = new ArrayList<>(), patterns = new ArrayList<>(), subjects = new ArrayList<>();
    while (in.hasNextLine()) {
      String line = in.nextLine();
      if (line.startsWith("P ")) { String[] parts = line.substring(2).split(" ", 2); names.add(parts[0]); patterns.add(decode(parts.length > 1 ? parts[1] : "")); }
      else if (line.startsWith("S ")) subjects.add(decode(line.substring(2)));
    }
    for (int i = 0; i < patterns.size(); i++) {
      try {
        Pattern compiled = Pattern.compile(patterns.get(i));
        StringBuilder out = new StringBuilder();
        for (String subject : subjects) out.append(compiled.matcher(subject).find() ? '1' : '0');
        System.out.println(names.get(i) + " " + out);
      } catch (PatternSyntaxException error) {
        System.out.println(names.get(i) + " !" + error.getDescription());
      }
    }
  }
}
`;

const GO = `package main

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
)

func main() {
	var data struct {
		Patterns map[string]string
		Subjects []string
	}
	if err := json.NewDecoder(os.Stdin).Decode(&data); err != nil {
		panic(err)
	}
	out := map[string]interface{}{}
	for name, pattern := range data.Patterns {
		compiled, err := regexp.Compile(pattern)
		if err != nil {
			out[name] = map[string]string{"error": err.Error()}
			continue
		}
		matches := []bool{}
		for _, subject := range data.Subjects {
			matches = append(matches, compiled.MatchString(subject))
		}
		out[name] = matches
	}
	encoded, _ := json.Marshal(out)
	fmt.Println(string(encoded))
}
`;

/** Code units as hex, so that Java reads lone surrogates and line breaks exactly. */
function hexUnits(text: string): string {
  return Array.from({ length: text.length }, (_, index) => text.charCodeAt(index).toString(16)).join(',');
}

function python(patterns: Record<string, string>, subjects: readonly string[]): EngineAnswers | null {
  if (!installed('python3', ['--version'])) return null;
  const input = JSON.stringify({ patterns: Object.fromEntries(Object.entries(patterns).map(([name, p]) => [name, endOfText(p, '\\Z')])), subjects });
  return JSON.parse(execFileSync('python3', ['-c', PYTHON], { input, maxBuffer: 64 * 1024 * 1024 }).toString()) as EngineAnswers;
}

function java(patterns: Record<string, string>, subjects: readonly string[]): EngineAnswers | null {
  if (!installed('java', ['-version'])) return null;
  const dir = mkdtempSync(join(tmpdir(), 'daybook-java-'));
  try {
    writeFileSync(join(dir, 'PatternCheck.java'), JAVA);
    const input = [
      ...Object.entries(patterns).map(([name, p]) => `P ${name} ${hexUnits(endOfText(p, '\\z'))}`),
      ...subjects.map((subject) => `S ${hexUnits(subject)}`),
    ].join('\n');
    const lines = execFileSync('java', [join(dir, 'PatternCheck.java')], { input, maxBuffer: 64 * 1024 * 1024 }).toString().trim().split('\n');
    return Object.fromEntries(
      lines.map((line) => {
        const [name, answer] = [line.slice(0, line.indexOf(' ')), line.slice(line.indexOf(' ') + 1)];
        return [name, answer.startsWith('!') ? { error: answer.slice(1) } : [...answer].map((bit) => bit === '1')];
      }),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function go(patterns: Record<string, string>, subjects: readonly string[]): EngineAnswers | null {
  if (!installed('go', ['version'])) return null;
  const dir = mkdtempSync(join(tmpdir(), 'daybook-go-'));
  try {
    writeFileSync(join(dir, 'go.mod'), 'module patterncheck\n\ngo 1.19\n');
    writeFileSync(join(dir, 'main.go'), GO);
    const input = JSON.stringify({ Patterns: Object.fromEntries(Object.entries(patterns).map(([name, p]) => [name, re2Escapes(p)])), Subjects: subjects });
    return JSON.parse(execFileSync('go', ['run', '.'], { cwd: dir, input, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, GOFLAGS: '-mod=mod', GOTOOLCHAIN: 'local' } }).toString()) as EngineAnswers;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Runs `patterns` on `subjects` in `engine`; null when the engine is not installed. */
export function runEngine(engine: EngineName, patterns: Record<string, string>, subjects: readonly string[]): EngineAnswers | null {
  if (engine === 'python') return python(patterns, subjects);
  if (engine === 'java') return java(patterns, subjects);
  return go(patterns, subjects);
}

/** Whether a string can travel to Go at all: Go strings are UTF-8, so a lone surrogate arrives as U+FFFD. */
export function representableInGo(text: string): boolean {
  return !/\p{Cs}/u.test(text);
}

/**
 * Names and free text that trip careless rules: blanks and invisible characters alone and inside
 * words, controls, separators, bidi marks, lone surrogates, emoji built with joiners, selectors,
 * skin tones and keycaps (and the same pieces out of place), characters beyond U+FFFF, a trailing
 * newline (which `$` lets through in Python and Java), look-alike letters and case-folding traps.
 */
export const TRICKY_TEXTS: readonly string[] = [
  'Acme Roofing', 'a', 'Ω', '漢字', 'مخبز البحيرة', 'Straße', 'ſ', '\u212a', 'İ', 'e\u0301', 'Ａｃｍｅ', '',
  ' ', '   ', '\t', 'a\tb', '\u00a0', '\u00a0a', '\u2800', 'a\u2800b', '\u3000', '\u3164', '\u115f', '\uffa0', '\u180e', '\u2060', '\u034f',
  '\u200b', 'a\u200b', '\u200bA', 'Ac\u200bme', '\u00ad', 'Mil\u00adler', '\ufeff', '\ufeffAcme', 'Acme\ufeff', '\ufe0f', 'Miller\ufe0f', 'a\u200dz',
  '\u{e0061}', 'x\u{e0061}', '\u{1d173}x', '\u{1bca0}', '\u{e0100}',
  '\u0000', 'a\u0000', '\u0007', '\u001b[2J', 'a\u007f', 'a\u0085b', '\u009f', 'a\n', 'abc\n', 'a\nb', 'a\r\nb', '\r', '\u000b', '\u000c',
  'a\u2028b', 'a\u2029', 'Invoice\u202eFDP.exe', 'x\u2066y', '\u202a', '\u200e', 'a\u200fb', '\u061c',
  '\ud800', 'a\udc00', '\udbff\ud800', '\udfff', '\ufffd', '\u{10ffff}', '\u{1f600}', '😀', '𝄞',
  'Café ☕️', 'Café ☕︎', '☕\ufe0f\ufe0f', 'Cafe 👍🏽', 'Cafe 👍🏽\u200d', '\u200d👍', 'Family 👩‍👩‍👧', '👩🏽‍💻', '👩\ufe0f\u200d💻', '👩\ufe0e\u200d💻', '👩\u200d\u200d💻',
  '👩\u200da', '🏽\u200d💻', '🏳️‍🌈', '❤️‍🔥', '©\ufe0f', '®', 'Keycap 1️⃣', '#️⃣', '*️⃣', '1\ufe0f', '1\u20e3', 'a\ufe0f\u20e3', '1\ufe0f\u20e3\u200d👍', '🇺🇸',
  '%', '_', '\\', "O'Brien", '"quoted"', '<b>', '&amp;', '$', '^', 'a$b', '[x]', '0@com', 'a@b.co',
];
