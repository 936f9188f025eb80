/**
 * Intent notifications: each intent row inserted sends NOTIFY on the intents channel with
 * '<schema>:<tenant>'. PostgreSQL folds identical notifications of one transaction into one and
 * delivers them only when it commits, so a listener never hears of intents it cannot yet claim.
 * Commits without intents insert no intent row and pay nothing.
 */
export const INTENT_NOTIFY_SQL = `
CREATE OR REPLACE FUNCTION @schema@.notify_intents() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM pg_notify('fencegate_intents', '@schema@:' || NEW.tenant);
  RETURN NULL;
END $$;

CREATE TRIGGER intents_notify AFTER INSERT ON @schema@.intents
  FOR EACH ROW EXECUTE FUNCTION @schema@.notify_intents();
`;
