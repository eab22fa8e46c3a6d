package main

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// subcommandTable lists the subcommands of the commands that have them.
func subcommandTable() map[string][]string {
	return map[string][]string{
		"account":    accountSubcommands,
		"audit":      auditSubcommands,
		"experiment": experimentNames(),
		"completion": {"bash", "zsh"},
	}
}

// flagLine matches a flag entry of a help page ("  --name …").
var flagLine = regexp.MustCompile(`(?m)^\s+--([a-z0-9][a-z0-9-]*)`)

// helpFlags returns the flags that `trainer PATH --help` lists: the
// completion and the help come from the same flag sets.
func helpFlags(path ...string) []string {
	var out bytes.Buffer
	dispatch(append(append([]string{}, path...), "--help"), &out, io.Discard)
	seen := map[string]bool{}
	var flags []string
	for _, m := range flagLine.FindAllStringSubmatch(out.String(), -1) {
		if !seen[m[1]] {
			seen[m[1]] = true
			flags = append(flags, "--"+m[1])
		}
	}
	sort.Strings(flags)
	return flags
}

// completionCase is one `case` arm of the script: the words offered after
// the command path (a bash case pattern over "CMD/SUB").
type completionCase struct {
	pattern string
	words   []string
}

// completionCases builds the table from the command registry, the
// subcommand table and every leaf's --help.
func completionCases() []completionCase {
	cmds := commands()
	names := commandNames(cmds)
	subs := subcommandTable()
	cases := []completionCase{{"/", append(append([]string{"help", "--version"}, names...), helpFlags("train")...)}}
	for _, c := range names {
		if c == "completion" {
			cases = append(cases, completionCase{"completion/*", subs[c]})
			continue
		}
		if s, ok := subs[c]; ok {
			cases = append(cases, completionCase{c + "/", s})
			for _, sc := range s {
				cases = append(cases, completionCase{c + "/" + sc, helpFlags(c, sc)})
			}
			continue
		}
		cases = append(cases, completionCase{c + "/*", helpFlags(c)})
	}
	cases = append(cases, completionCase{"help/", names})
	for _, c := range names {
		if s, ok := subs[c]; ok {
			cases = append(cases, completionCase{"help/" + c, s})
		}
	}
	// The default job: `trainer --flag …` takes the train flags.
	cases = append(cases, completionCase{"-*", helpFlags("train")})
	return cases
}

// completionScript is a bash completion function; zsh loads it through
// bashcompinit.
func completionScript(shell string) (string, error) {
	var b strings.Builder
	switch shell {
	case "bash":
		b.WriteString("# bash completion for trainer: source <(trainer completion bash)\n")
	case "zsh":
		b.WriteString("# zsh completion for trainer: source <(trainer completion zsh)\n")
		b.WriteString("autoload -U +X compinit && compinit\nautoload -U +X bashcompinit && bashcompinit\n")
	default:
		return "", usagef("%s", unknownName("shell", shell, []string{"bash", "zsh"}))
	}
	b.WriteString(`_trainer() {
  local cur="${COMP_WORDS[COMP_CWORD]}" cmd="" sub="" words=""
  if ((COMP_CWORD > 1)); then cmd="${COMP_WORDS[1]}"; fi
  if ((COMP_CWORD > 2)); then
    case "$cmd" in
      ` + strings.Join(groupNames(), "|") + `) sub="${COMP_WORDS[2]}" ;;
    esac
  fi
  case "$cmd/$sub" in
`)
	for _, c := range completionCases() {
		fmt.Fprintf(&b, "    %s) words=%q ;;\n", c.pattern, strings.Join(c.words, " "))
	}
	b.WriteString(`  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _trainer trainer
`)
	return b.String(), nil
}

// groupNames are the commands whose second word is a subcommand.
func groupNames() []string {
	var g []string
	for c := range subcommandTable() {
		g = append(g, c)
	}
	sort.Strings(g)
	return append(g, "help")
}

const completionUsage = `usage: trainer completion bash|zsh

Prints a completion script of every command, subcommand and flag:
  bash:  source <(trainer completion bash)    (or save it under ~/.local/share/bash-completion/completions/trainer)
  zsh:   source <(trainer completion zsh)     (uses zsh's bashcompinit)
The script names the binary 'trainer': put it on PATH (go build -o bin/trainer ./cmd/trainer).
`

// runCompletion implements `trainer completion bash|zsh`.
func runCompletion(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, completionUsage)
		return 2
	}
	if isHelpArg(args[0]) || len(args) == 2 && isHelpArg(args[1]) {
		fmt.Fprint(stdout, completionUsage)
		return 0
	}
	if len(args) > 1 {
		fmt.Fprintf(stderr, "trainer completion: unexpected arguments: %s\n", strings.Join(args[1:], " "))
		return 2
	}
	s, err := completionScript(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "trainer completion: %v\n", err)
		return 2
	}
	fmt.Fprint(stdout, s)
	return 0
}
