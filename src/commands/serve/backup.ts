import { Args } from '@oclif/core';
import { KbCommand } from '../../cli/base-command.js';
import { UsageError } from '../../cli/errors.js';
import { backupDataDir, serveCommand, storageFlags, storageOptions } from '../../cli/storage.js';

export default class ServeBackup extends KbCommand {
  static override summary = 'Copy the local server\'s database into a new directory, while it runs';

  static override description = `Takes a consistent copy of the SQLite database in the data dir with SQLite's online backup:
\`kb serve\` may keep running and writing meanwhile, and the copy holds every write committed before the backup
began. DEST is a new directory, or one that holds no kb.db* file at all (a database, or a -wal, -shm or -journal
left there, is refused by name); \`kb serve --data-dir DEST\` serves the copy. The copy appears whole or not at all.

On PostgreSQL (--database or KB_DATABASE_URL) use PostgreSQL's own tool instead, pg_dump:
  pg_dump --format=custom --file kb.dump "$KB_DATABASE_URL"`;

  static override examples = [
    { description: 'Back up the default data dir', command: '<%= config.bin %> serve backup ./kb-backup' },
    { description: 'Serve the copy, on a port of its own beside the running server', command: '<%= config.bin %> serve --data-dir ./kb-backup --port 9000' },
    { description: 'Back up another data dir, into a directory named by the day', command: '<%= config.bin %> serve backup /backups/kb-$(date +%F) --data-dir /srv/kb' },
  ];

  static override enableJsonFlag = true;

  static override args = {
    dest: Args.string({ description: 'A directory for the copy that holds no kb.db* file.', required: true }),
  };

  static override flags = storageFlags;

  async run(): Promise<{ path: string; bytes: number }> {
    const { args, flags } = await this.parse(ServeBackup);
    const storage = storageOptions(flags, this.context);
    if (storage.engine !== 'sqlite') {
      throw new UsageError(
        'kb serve backup copies the SQLite database of a data dir; on PostgreSQL, use pg_dump.',
        'pg_dump --format=custom --file kb.dump "$KB_DATABASE_URL"',
      );
    }
    const copy = await backupDataDir(storage.dataDir, args.dest);
    if (copy.warning !== undefined) this.io.stderr(`Warning: ${copy.warning}\n`);
    if (!this.jsonEnabled()) {
      this.io.stderr(`Backed up to ${copy.path} (${copy.bytes} bytes). Serve it with \`${serveCommand(args.dest)}\`.\n`);
    }
    return copy;
  }
}
