import { type Command, CommandHelp, Help, type Interfaces } from '@oclif/core';
import { environmentTable, exitCodesTable, joinParagraphs, wrapWords } from './help-text.js';
import { displayWidth } from '../text/width.js';

/** The words of a shell command, split at spaces outside quotes and `$( )`, so that a line can break between them. */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  let depth = 0;
  for (let i = 0; i < command.length; i++) {
    const char = command[i] as string;
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
      else if (char === '\\' && quote === '"') word += command[i++] ?? '';
    } else if (char === "'" || char === '"') quote = char;
    else if (char === '(') depth++;
    else if (char === ')') depth = Math.max(0, depth - 1);
    else if (char === ' ' && depth === 0) {
      if (word !== '') words.push(word);
      word = '';
      continue;
    }
    word += char;
  }
  if (word !== '') words.push(word);
  return words;
}

/**
 * An example's command line, with the prompt of every example (`$ `), broken between words with ` \` where it is
 * wider than `width`: each line a shell continues, so that copying all of it runs the command.
 */
export function exampleLines(command: string, width: number): string[] {
  const lines: string[] = [];
  let line = '$';
  for (const word of shellWords(command)) {
    const room = width - (lines.length === 0 ? 0 : 4) - 2;
    if (line !== '$' && line !== '' && displayWidth(line) + 1 + displayWidth(word) > room) {
      lines.push(`${line} \\`);
      line = word;
    } else line = line === '' ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines.map((text, i) => (i === 0 ? text : `    ${text}`));
}

/**
 * A command's help with its prose as paragraphs (written on several lines in the source or not) wrapped to the
 * terminal, flag descriptions kept within it, and every example with its `$ ` prompt.
 */
class KbCommandHelp extends CommandHelp {
  protected override description(): string | undefined {
    const { summary, description } = this.command;
    if (!description) return undefined;
    const text = [summary, joinParagraphs(this.render(description))].filter(Boolean).join('\n\n');
    // Each line is a paragraph now; one that begins with spaces (a command or a file's lines, to copy) keeps them,
    // and what it wraps onto the next line goes two further in, as YAML and a reader take a continued line.
    const width = this.opts.maxWidth - this.indentSpacing;
    return text
      .split('\n')
      .flatMap((line) => {
        const indent = /^ */.exec(line)?.[0] ?? '';
        if (line.trim() === '') return [''];
        if (indent === '') return wrapWords(line, width);
        const [first = '', ...rest] = wrapWords(line, width - indent.length);
        return [`${indent}${first}`, ...wrapWords(rest.join(' '), width - indent.length - 2).map((part) => `${indent}  ${part}`)];
      })
      .join('\n');
  }

  protected override examples(examples: Command.Example[] | string | undefined): string | undefined {
    if (examples === undefined || examples.length === 0) return undefined;
    const width = this.opts.maxWidth - this.indentSpacing;
    const list = typeof examples === 'string' ? [examples] : examples;
    return list
      .map((example) => {
        const { description, command } = typeof example === 'string' ? { description: undefined, command: example } : example;
        // As oclif lays them out: a command alone at the section's indentation, under its description one more.
        if (description === undefined) return exampleLines(this.render(command), width).join('\n');
        const lines = exampleLines(this.render(command), width - this.indentSpacing).map((line) => `  ${line}`);
        return `${wrapWords(this.render(description), width).join('\n')}\n\n${lines.join('\n')}`;
      })
      .join('\n\n');
  }

  /** oclif indents a long list's second column by 6 but wraps it for 4 (two columns too wide): wrapped here for 6. */
  override renderList(input: (string | undefined)[][], opts: Parameters<CommandHelp['renderList']>[1]): string {
    const widest = Math.max(0, ...input.map(([left]) => displayWidth(left ?? '')));
    const tooLong = input.some(([, right]) => right !== undefined && this.wrap(right.trim(), opts.indentation + widest + 2).split('\n').length > 4);
    if (!opts.multiline && !tooLong) return super.renderList(input, opts);
    return input
      .filter(([left, right]) => left || right)
      .map(([left, right]) => {
        const head = left ? this.wrap(left.trim(), opts.indentation) : '';
        return right ? `${head}\n${this.indent(this.wrap(right.trim(), opts.indentation + 4), 4)}` : head;
      })
      .join('\n\n');
  }
}

/** The help topics that are not commands: tables that scripts and their authors look up. */
export const HELP_TOPICS: Record<string, { title: string; render(width: number): string } | undefined> = {
  'exit-codes': { title: 'EXIT CODES', render: exitCodesTable },
  environment: { title: 'ENVIRONMENT', render: environmentTable },
};

/**
 * kb's help: commands' prose wrapped as paragraphs to the terminal (80 columns when piped), and the root help's exit
 * codes and environment variables that scripts depend on (docs/contract.md, Exit codes and Environment variables), with a hanging indent.
 */
export default class KbHelp extends Help {
  constructor(config: Interfaces.Config, opts: Partial<Interfaces.HelpOptions> = {}) {
    // A topic lists each command once, as gh does: `ns ls` is in `kb ns list --help`'s ALIASES, not a second row.
    super(config, { hideAliasesFromRoot: true, ...opts });
    this.CommandHelpClass = KbCommandHelp;
  }

  protected override async showRootHelp(): Promise<void> {
    await super.showRootHelp();
    this.log(`EXIT CODES\n${exitCodesTable(this.opts.maxWidth)}\n\nENVIRONMENT\n${environmentTable(this.opts.maxWidth)}\n`);
  }

  /** `kb help exit-codes` and `kb help environment`: one of the root help's tables alone. False for another name. */
  showHelpTopic(name: string): boolean {
    const table = HELP_TOPICS[name];
    if (table === undefined) return false;
    this.log(`${table.title}\n${table.render(this.opts.maxWidth)}`);
    return true;
  }

  /** A line oclif writes wider than the terminal (a long summary at the top) is wrapped under its own indentation. */
  protected override log(...args: string[]): void {
    const width = this.opts.maxWidth;
    const fitted = args.map((text) =>
      text
        .split('\n')
        .flatMap((line) => {
          if (displayWidth(line) <= width) return [line];
          const indent = /^ */.exec(line)?.[0] ?? '';
          return wrapWords(line, width - indent.length).map((part) => `${indent}${part}`);
        })
        .join('\n'),
    );
    super.log(...fitted);
  }
}
