import type { TestDatabase } from './database.js';

/**
 * Makes the database itself refuse, at COMMIT, every transaction that inserted a namespace matching `condition` (SQL
 * over NEW.key, read by both engines): a real commit failure, after every statement of the batch ran. SQLite checks a
 * deferred foreign key at COMMIT (a row that breaks it is inserted for such a namespace); PostgreSQL runs a deferred
 * constraint trigger, which fails the commit as a full disk does (SQLSTATE 53100).
 */
export async function failCommitsWhen(database: TestDatabase, condition: string): Promise<void> {
  if (database.engine === 'sqlite') {
    await database.sql('CREATE TABLE fail_parent (id INTEGER PRIMARY KEY)');
    await database.sql('CREATE TABLE fail_child (ref INTEGER REFERENCES fail_parent (id) DEFERRABLE INITIALLY DEFERRED)');
    await database.sql(`CREATE TRIGGER fail_commit AFTER INSERT ON namespaces WHEN ${condition} BEGIN INSERT INTO fail_child VALUES (1); END`);
    return;
  }
  await database.sql(`CREATE FUNCTION fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN IF ${condition} THEN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END IF;
    RETURN NULL; END $$`);
  await database.sql(`CREATE CONSTRAINT TRIGGER fail_commit AFTER INSERT ON namespaces DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION fail_commit()`);
}
