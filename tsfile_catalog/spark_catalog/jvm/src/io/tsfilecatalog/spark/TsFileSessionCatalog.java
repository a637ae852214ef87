package io.tsfilecatalog.spark;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.apache.spark.sql.catalyst.analysis.NamespaceAlreadyExistsException;
import org.apache.spark.sql.catalyst.analysis.NoSuchFunctionException;
import org.apache.spark.sql.catalyst.analysis.NoSuchNamespaceException;
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException;
import org.apache.spark.sql.catalyst.analysis.NonEmptyNamespaceException;
import org.apache.spark.sql.catalyst.analysis.TableAlreadyExistsException;
import org.apache.spark.sql.connector.catalog.CatalogExtension;
import org.apache.spark.sql.connector.catalog.CatalogPlugin;
import org.apache.spark.sql.connector.catalog.Column;
import org.apache.spark.sql.connector.catalog.FunctionCatalog;
import org.apache.spark.sql.connector.catalog.Identifier;
import org.apache.spark.sql.connector.catalog.NamespaceChange;
import org.apache.spark.sql.connector.catalog.StagedTable;
import org.apache.spark.sql.connector.catalog.SupportsNamespaces;
import org.apache.spark.sql.connector.catalog.Table;
import org.apache.spark.sql.connector.catalog.TableCatalog;
import org.apache.spark.sql.connector.catalog.TableChange;
import org.apache.spark.sql.connector.catalog.functions.UnboundFunction;
import org.apache.spark.sql.connector.expressions.Transform;
import org.apache.spark.sql.internal.SQLConf;

/**
 * The tsfile catalog as Spark's session catalog ({@code spark.sql.catalog.spark_catalog}), as
 * Iceberg's {@code SparkSessionCatalog} is: tsfile tables live in the warehouse, every other
 * table, view, function and namespace in Spark's built-in catalog, which Spark hands over with
 * {@link #setDelegateCatalog}. Which of the two serves a name, and what a name held by both
 * means, is decided by the Python delegate ({@code session_route}); this class only routes.
 *
 * <p>It implements {@code CatalogExtension} itself rather than extending Spark's {@code
 * DelegatingCatalogExtension}: Spark runs its v1 commands straight against the built-in
 * catalog for the latter (a Parquet {@code CREATE TABLE} would never ask whether the name is a
 * tsfile table's). Configured under another name, Spark never calls {@link
 * #setDelegateCatalog} and it is the plain {@link TsFileCatalog}.
 */
public class TsFileSessionCatalog extends TsFileCatalog implements CatalogExtension {
  private CatalogPlugin builtIn;

  @Override
  public void setDelegateCatalog(CatalogPlugin delegate) {
    if (!(delegate instanceof TableCatalog
        && delegate instanceof SupportsNamespaces
        && delegate instanceof FunctionCatalog)) {
      throw new IllegalArgumentException(
          "tsfile session catalog: Spark's built-in catalog " + delegate
              + " is not a table, namespace and function catalog");
    }
    this.builtIn = delegate;
    // Spark loads the session catalog at a session's first statement, and a CREATE TABLE
    // USING tsfile then looks the provider up in the session before it calls the catalog.
    Client.serveSession();
  }

  private TableCatalog tables() {
    return (TableCatalog) builtIn;
  }

  private SupportsNamespaces namespaces() {
    return (SupportsNamespaces) builtIn;
  }

  // -- which catalog serves a name: the delegate decides ------------------------------------

  /** Whether the built-in catalog holds {@code ident} (a table or a view). */
  private boolean inBuiltIn(Identifier ident) {
    if (ident.namespace().length != 1) {
      return false; // the built-in catalog has one namespace level; a metadata table has two
    }
    return tables().tableExists(ident);
  }

  /** Whether the warehouse serves {@code ident} for {@code action} (Python's answer). */
  private boolean ours(String action, Identifier ident, ObjectNode extra) {
    ObjectNode request = request(ident);
    request.put("action", action);
    request.put("builtin_exists", inBuiltIn(ident));
    if (extra != null) {
      request.setAll(extra);
    }
    return "tsfile".equals(Client.call("session_route", request).asText());
  }

  private boolean ours(Identifier ident) {
    return builtIn == null || ours("table", ident, null);
  }

  private boolean creates(Identifier ident, Map<String, String> properties) {
    if (builtIn == null) {
      return true;
    }
    ObjectNode extra = Client.object();
    extra.put("provider", properties.get(TableCatalog.PROP_PROVIDER));
    // What a missing USING means: this session's default source, as Spark's catalog reads it.
    extra.put("default_source", SQLConf.get().defaultDataSourceName());
    return ours("create", ident, extra);
  }

  /**
   * Refuses a table or persistent view Spark is about to create in its built-in catalog
   * without asking this one ({@link SessionCatalogCheck}) when the warehouse holds the name.
   */
  void checkBuiltInCreate(String database, String name, String statement, String provider) {
    if (builtIn == null) {
      return;
    }
    ObjectNode request = request(Identifier.of(new String[] {database}, name));
    request.put("action", "create");
    request.put("builtin_exists", false);
    request.put("statement", statement);
    request.put("provider", provider);
    Client.call("session_route", request);
  }

  // -- tables ---------------------------------------------------------------------------------

  @Override
  public Identifier[] listTables(String[] namespace) throws NoSuchNamespaceException {
    if (builtIn == null) {
      return super.listTables(namespace);
    }
    Map<String, Identifier> out = new LinkedHashMap<>();
    boolean found = false;
    if (super.namespaceExists(namespace)) {
      found = true;
      for (Identifier ident : super.listTables(namespace)) {
        out.putIfAbsent(ident.name(), ident);
      }
    }
    if (namespaces().namespaceExists(namespace)) {
      found = true;
      for (Identifier ident : tables().listTables(namespace)) {
        out.putIfAbsent(ident.name(), ident);
      }
    }
    if (!found) {
      throw new NoSuchNamespaceException(namespace);
    }
    return out.values().toArray(new Identifier[0]);
  }

  @Override
  public boolean tableExists(Identifier ident) {
    return super.tableExists(ident) || (builtIn != null && inBuiltIn(ident));
  }

  @Override
  public Table loadTable(Identifier ident) throws NoSuchTableException {
    return ours(ident) ? super.loadTable(ident) : tables().loadTable(ident);
  }

  @Override
  public Table loadTable(Identifier ident, String version) throws NoSuchTableException {
    return ours(ident) ? super.loadTable(ident, version) : tables().loadTable(ident, version);
  }

  @Override
  public Table loadTable(Identifier ident, long timestamp) throws NoSuchTableException {
    return ours(ident)
        ? super.loadTable(ident, timestamp)
        : tables().loadTable(ident, timestamp);
  }

  @Override
  public void invalidateTable(Identifier ident) {
    if (builtIn != null) {
      tables().invalidateTable(ident); // Spark's catalog caches its relations; the warehouse not
    }
  }

  @Override
  @SuppressWarnings("deprecation")
  public Table createTable(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (creates(ident, properties)) {
      Table created = super.createTable(ident, columns, partitions, properties);
      if (builtIn != null) {
        ensureBuiltIn(ident.namespace()); // the warehouse records the database it created
      }
      return created;
    }
    builtInNamespace(ident.namespace());
    return tables().createTable(ident, columns, partitions, properties);
  }

  @Override
  public StagedTable stageCreate(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws TableAlreadyExistsException, NoSuchNamespaceException {
    if (creates(ident, properties)) {
      return super.stageCreate(ident, columns, partitions, properties);
    }
    throw builtInAsSelect(ident, properties);
  }

  @Override
  public StagedTable stageReplace(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException, NoSuchTableException {
    if (creates(ident, properties)) {
      return super.stageReplace(ident, columns, partitions, properties);
    }
    throw builtInAsSelect(ident, properties);
  }

  @Override
  public StagedTable stageCreateOrReplace(
      Identifier ident, Column[] columns, Transform[] partitions, Map<String, String> properties)
      throws NoSuchNamespaceException {
    if (creates(ident, properties)) {
      return super.stageCreateOrReplace(ident, columns, partitions, properties);
    }
    throw builtInAsSelect(ident, properties);
  }

  private UnsupportedOperationException builtInAsSelect(
      Identifier ident, Map<String, String> properties) {
    ObjectNode extra = Client.object();
    extra.put("provider", properties.get(TableCatalog.PROP_PROVIDER));
    ObjectNode request = request(ident);
    request.setAll(extra);
    return new UnsupportedOperationException(
        Client.call("session_as_select_refusal", request).asText());
  }

  @Override
  public Table alterTable(Identifier ident, TableChange... changes) throws NoSuchTableException {
    return ours(ident) ? super.alterTable(ident, changes) : tables().alterTable(ident, changes);
  }

  @Override
  public boolean dropTable(Identifier ident) {
    return builtIn == null || ours("drop", ident, null)
        ? super.dropTable(ident)
        : tables().dropTable(ident);
  }

  @Override
  public boolean purgeTable(Identifier ident) {
    return builtIn == null || ours("drop", ident, null)
        ? super.purgeTable(ident)
        : tables().purgeTable(ident);
  }

  @Override
  public void renameTable(Identifier from, Identifier to)
      throws NoSuchTableException, TableAlreadyExistsException {
    if (builtIn == null) {
      super.renameTable(from, to);
      return;
    }
    ObjectNode extra = Client.object();
    extra.set("new_namespace", Client.strings(to.namespace()));
    extra.put("new_name", to.name());
    extra.put("new_builtin_exists", inBuiltIn(to));
    if (ours("rename", from, extra)) {
      super.renameTable(from, to);
    } else {
      tables().renameTable(from, to);
    }
  }

  // -- namespaces: one set, the union of both; new ones are Spark's --------------------------

  /**
   * Creates {@code namespace} in the built-in catalog when only the warehouse has it: a
   * namespace either catalog holds is the session catalog's, for every kind of table.
   */
  void builtInNamespace(String[] namespace) {
    if (builtIn != null && namespace.length == 1 && super.namespaceExists(namespace)) {
      ensureBuiltIn(namespace);
    }
  }

  private void ensureBuiltIn(String[] namespace) {
    if (namespace.length == 1 && !namespaces().namespaceExists(namespace)) {
      try {
        namespaces().createNamespace(namespace, Collections.emptyMap());
      } catch (NamespaceAlreadyExistsException e) {
        // created meanwhile: what was asked for
      }
    }
  }

  @Override
  public String[][] listNamespaces() throws NoSuchNamespaceException {
    if (builtIn == null) {
      return super.listNamespaces();
    }
    Map<String, String[]> out = new LinkedHashMap<>();
    for (String[] namespace : namespaces().listNamespaces()) {
      out.putIfAbsent(String.join(".", namespace), namespace);
    }
    // The warehouse's own list (its no-argument form would call back into this class).
    for (String[] namespace : super.listNamespaces(new String[0])) {
      out.putIfAbsent(String.join(".", namespace), namespace);
    }
    return out.values().toArray(new String[0][]);
  }

  @Override
  public String[][] listNamespaces(String[] namespace) throws NoSuchNamespaceException {
    if (builtIn == null) {
      return super.listNamespaces(namespace);
    }
    if (namespace.length == 0) {
      return listNamespaces();
    }
    if (!namespaceExists(namespace)) {
      throw new NoSuchNamespaceException(namespace);
    }
    return new String[0][]; // one level in both
  }

  @Override
  public boolean namespaceExists(String[] namespace) {
    return super.namespaceExists(namespace)
        || (builtIn != null && namespaces().namespaceExists(namespace));
  }

  @Override
  public Map<String, String> loadNamespaceMetadata(String[] namespace)
      throws NoSuchNamespaceException {
    if (builtIn != null && namespaces().namespaceExists(namespace)) {
      return namespaces().loadNamespaceMetadata(namespace);
    }
    return super.loadNamespaceMetadata(namespace);
  }

  @Override
  public void createNamespace(String[] namespace, Map<String, String> metadata)
      throws NamespaceAlreadyExistsException {
    if (builtIn == null) {
      super.createNamespace(namespace, metadata);
      return;
    }
    if (namespaceExists(namespace)) {
      throw new NamespaceAlreadyExistsException(namespace);
    }
    // Spark's catalog keeps its location and comment; the warehouse records the database
    // when its first tsfile table is created there.
    namespaces().createNamespace(namespace, metadata);
  }

  @Override
  public void alterNamespace(String[] namespace, NamespaceChange... changes)
      throws NoSuchNamespaceException {
    if (builtIn == null) {
      super.alterNamespace(namespace, changes);
      return;
    }
    builtInNamespace(namespace);
    namespaces().alterNamespace(namespace, changes);
  }

  @Override
  public boolean dropNamespace(String[] namespace, boolean cascade)
      throws NoSuchNamespaceException, NonEmptyNamespaceException {
    if (builtIn == null) {
      return super.dropNamespace(namespace, cascade);
    }
    boolean inWarehouse = super.namespaceExists(namespace);
    boolean inSpark = namespaces().namespaceExists(namespace);
    if (!cascade
        && ((inWarehouse && super.listTables(namespace).length > 0)
            || (inSpark && tables().listTables(namespace).length > 0))) {
      throw new NonEmptyNamespaceException(namespace); // checked in both before either drops
    }
    boolean dropped = false;
    if (inWarehouse) {
      dropped = super.dropNamespace(namespace, cascade);
    }
    if (inSpark) {
      dropped = namespaces().dropNamespace(namespace, cascade) || dropped;
    }
    return dropped;
  }

  // -- functions: Spark's ---------------------------------------------------------------------

  @Override
  public Identifier[] listFunctions(String[] namespace) throws NoSuchNamespaceException {
    if (builtIn == null) {
      return new Identifier[0];
    }
    return ((FunctionCatalog) builtIn).listFunctions(namespace);
  }

  @Override
  public UnboundFunction loadFunction(Identifier ident) throws NoSuchFunctionException {
    if (builtIn == null) {
      throw new NoSuchFunctionException(ident);
    }
    return ((FunctionCatalog) builtIn).loadFunction(ident);
  }
}
